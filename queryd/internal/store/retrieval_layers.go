package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// LexicalLayersPrep is PrepareLexical's result for several layers at once,
// kept per layer: a search over all of them and one over each layer alone
// each take their own statistics from it (Prep, WordsDF).
type LexicalLayersPrep struct {
	Lexemes       []string
	Phrases       []string
	PhraseLexemes [][]string
	// Layers holds each layer's chunk count, total length and the document
	// frequency of the query's lexemes and of the words' lexemes.
	Layers map[int64]LexicalStats
	// Words are the lexemes of each of the words PrepareLexicalLayers was
	// given, in the order the database lists them.
	Words [][]string
}

// Prep returns what PrepareLexical returns for the layers ids.
func (p *LexicalLayersPrep) Prep(ids []int64) LexicalPrep {
	out := LexicalPrep{Lexemes: p.Lexemes, Phrases: p.Phrases, PhraseLexemes: p.PhraseLexemes,
		Stats: LexicalStats{DF: make(map[string]int64, len(p.Lexemes))}}
	for _, l := range p.Lexemes {
		out.Stats.DF[l] = 0
	}
	for _, id := range ids {
		st := p.Layers[id]
		out.Stats.Chunks += st.Chunks
		out.Stats.TotalLen += st.TotalLen
		for _, l := range p.Lexemes {
			out.Stats.DF[l] += st.DF[l]
		}
	}
	return out
}

// WordsDF returns what LexemeDF returns for the i-th words and the layers
// ids.
func (p *LexicalLayersPrep) WordsDF(i int, ids []int64) map[string]int64 {
	out := make(map[string]int64, len(p.Words[i]))
	for _, l := range p.Words[i] {
		var df int64
		for _, id := range ids {
			df += p.Layers[id].DF[l]
		}
		out[l] = df
	}
	return out
}

// PrepareLexicalLayers reads in one round trip what PrepareLexical reads
// for the layers together and for each layer alone, and what LexemeDF
// reads for each of words: the lexemes and phrase queries once, the
// statistics per layer.
func (s *Corpus) PrepareLexicalLayers(ctx context.Context, query string, terms []string, layerIDs []int64, words []string) (LexicalLayersPrep, error) {
	p := LexicalLayersPrep{Layers: make(map[int64]LexicalStats, len(layerIDs)), Words: make([][]string, len(words))}
	for _, id := range layerIDs {
		p.Layers[id] = LexicalStats{DF: map[string]int64{}}
	}
	if terms == nil {
		terms = []string{}
	}
	if words == nil {
		words = []string{}
	}
	b := &pgx.Batch{}
	b.Queue(`SELECT lexeme FROM unnest(to_tsvector('english', $1)) ORDER BY lexeme`, query).Query(func(rows pgx.Rows) error {
		var err error
		p.Lexemes, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	// Each layer's document frequency of the query's lexemes and of the
	// words' lexemes; a layer without the lexeme has no row.
	b.Queue(`SELECT s.layer_id, s.lexeme, s.df::bigint FROM strata.lexeme_stats s
		WHERE s.layer_id = ANY($3) AND s.lexeme IN (
			SELECT lexeme FROM unnest(to_tsvector('english', $1))
			UNION SELECT lexeme FROM unnest($2::text[]) w, unnest(to_tsvector('english', w)))`,
		query, words, layerIDs).Query(func(rows pgx.Rows) error {
		var id, df int64
		var l string
		_, err := pgx.ForEachRow(rows, []any{&id, &l, &df}, func() error {
			if st, ok := p.Layers[id]; ok {
				st.DF[l] = df
			}
			return nil
		})
		return err
	})
	b.Queue(`SELECT layer_id, chunks, total_len FROM strata.lexical_layer_stats WHERE layer_id = ANY($1)`,
		layerIDs).Query(func(rows pgx.Rows) error {
		var id, n, total int64
		_, err := pgx.ForEachRow(rows, []any{&id, &n, &total}, func() error {
			if st, ok := p.Layers[id]; ok {
				st.Chunks, st.TotalLen = n, total
				p.Layers[id] = st
			}
			return nil
		})
		return err
	})
	b.Queue(`SELECT coalesce(phraseto_tsquery('english', t)::text, ''),
			ARRAY(SELECT lexeme FROM unnest(to_tsvector('english', t)))
		FROM unnest($1::text[]) WITH ORDINALITY x(t, i) ORDER BY i`, terms).Query(func(rows pgx.Rows) error {
		var q string
		var ls []string
		_, err := pgx.ForEachRow(rows, []any{&q, &ls}, func() error {
			p.Phrases = append(p.Phrases, q)
			p.PhraseLexemes = append(p.PhraseLexemes, ls)
			return nil
		})
		return err
	})
	b.Queue(`SELECT x.i::int, ARRAY(SELECT lexeme FROM unnest(to_tsvector('english', x.w)))
		FROM unnest($1::text[]) WITH ORDINALITY x(w, i)`, words).Query(func(rows pgx.Rows) error {
		var i int
		var ls []string
		_, err := pgx.ForEachRow(rows, []any{&i, &ls}, func() error {
			p.Words[i-1] = ls
			return nil
		})
		return err
	})
	if err := s.db.SendBatch(ctx, b).Close(); err != nil {
		return p, fmt.Errorf("prepare lexical search of %d layers: %w", len(layerIDs), err)
	}
	return p, nil
}

// errManyMismatch is returned when the searches given to SearchBM25Many
// differ in more than it allows.
var errManyMismatch = errors.New("the searches differ in more than their layers' statistics")

// SearchBM25Many runs the impact-ordered searches qs in one statement and
// returns what SearchBM25 returns for each (hits[i] for qs[i]) and the
// layer of every chunk found. The searches may differ only in their
// layers, terms, idf, shares, average length, phrase boosts and phrase
// match (a search over several layers and one over each of them alone);
// the rest must be equal. Each (lexeme, layer) posting list is read once,
// each candidate's tsvector is unnested once and its phrases matched
// once, and each document's chunks are read once for the document
// evidence, however many of the searches hold it: the work that 1+N
// statements would each repeat.
func (s *Corpus) SearchBM25Many(ctx context.Context, qs []BM25Query) (hits [][]LexHit, layerOf map[int64]int64, err error) {
	hits = make([][]LexHit, len(qs))
	layerOf = map[int64]int64{}
	if len(qs) == 0 {
		return hits, layerOf, nil
	}
	q0 := qs[0]
	if q0.Impact == nil {
		return nil, nil, fmt.Errorf("bm25 search of %d: %w (no impact selection)", len(qs), errManyMismatch)
	}
	for _, q := range qs[1:] {
		if q.Impact == nil || q.Impact.PerTerm != q0.Impact.PerTerm || q.Impact.Candidates != q0.Impact.Candidates ||
			q.Impact.PhraseLimit != q0.Impact.PhraseLimit || !slices.Equal(q.Phrases, q0.Phrases) ||
			q.K1 != q0.K1 || q.B != q0.B || q.Limit != q0.Limit || q.ExactFirst != q0.ExactFirst ||
			q.DocTermDiscount != q0.DocTermDiscount || q.DocContext != q0.DocContext || !maps.Equal(q.Filter, q0.Filter) ||
			!slices.Equal(q.DocPresets, q0.DocPresets) || (q.DocPresets == nil) != (q0.DocPresets == nil) {
			return nil, nil, fmt.Errorf("bm25 search of %d: %w", len(qs), errManyMismatch)
		}
	}
	filter, err := json.Marshal(nonNilMap(q0.Filter))
	if err != nil {
		return nil, nil, fmt.Errorf("bm25 search of %d: %w", len(qs), err)
	}
	phrases := q0.Phrases
	if phrases == nil {
		phrases = []string{}
	}
	// The searches are scopes 1..len(qs): their terms, layers, average
	// lengths, phrase boosts (len(phrases) per scope) and phrase matches as
	// flat arrays.
	var tScope, lScope, pmScope []int32
	var tLexeme, pm []string
	var tIDF, tShare, avg, boosts []float64
	var layers []int64
	seen := map[string]bool{}
	var lexemes []string
	for i, q := range qs {
		scope := int32(i + 1)
		for j, l := range q.Terms {
			tScope = append(tScope, scope)
			tLexeme = append(tLexeme, l)
			tIDF = append(tIDF, q.IDF[j])
			share := 0.0
			if j < len(q.Share) {
				share = q.Share[j]
			}
			tShare = append(tShare, share)
			if !seen[l] {
				seen[l] = true
				lexemes = append(lexemes, l)
			}
		}
		for _, id := range q.LayerIDs {
			lScope = append(lScope, scope)
			layers = append(layers, id)
		}
		avg = append(avg, q.AvgLen)
		for j := range phrases {
			b := 0.0
			if j < len(q.PhraseBoosts) {
				b = q.PhraseBoosts[j]
			}
			boosts = append(boosts, b)
		}
		if q.Impact.PhraseMatch != "" {
			pmScope = append(pmScope, scope)
			pm = append(pm, q.Impact.PhraseMatch)
		}
	}
	order := "score DESC, id"
	if q0.ExactFirst {
		order = "cardinality(exact) DESC, score DESC, id"
	}
	scored := scoredChunksMany
	docs := q0.DocTermDiscount != 0 || q0.DocContext != 0
	if docs {
		scored = scoredInDocumentsMany
	}
	args := []any{tScope, tLexeme, tIDF, tShare, lScope, layers, avg, string(filter), q0.K1, q0.B,
		phrases, boosts, len(phrases), q0.Limit, nil, nil, pmScope, pm,
		q0.Impact.PhraseLimit, lexemes}
	if docs {
		any := make([]string, len(lexemes))
		for i, l := range lexemes {
			any[i] = "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(l) + "'"
		}
		args = append(args, q0.DocTermDiscount, q0.DocContext, strings.Join(any, " | "), q0.DocPresets)
	}
	sql := `
		WITH t AS (SELECT * FROM unnest($1::int[], $2::text[], $3::float8[], $4::float8[]) AS t(scope, lexeme, idf, share)),
		sl AS (SELECT * FROM unnest($5::int[], $6::bigint[]) AS s(scope, layer_id)),
		ids AS MATERIALIZED (
			(SELECT scope, id FROM unnest($15::int[], $16::bigint[]) AS c(scope, id))
			UNION
			(SELECT pm.scope, c.id FROM unnest($17::int[], $18::text[]) AS pm(scope, m)
				CROSS JOIN LATERAL (SELECT c.id FROM strata.chunks c WHERE c.tsv @@ pm.m::tsquery
					AND c.layer_id = ANY(ARRAY(SELECT layer_id FROM sl WHERE sl.scope = pm.scope)) LIMIT $19) c)
		),
		cand AS MATERIALIZED (
			SELECT c.id, c.layer_id, c.document_id, c.tsv, c.tsv_len FROM strata.chunks c
			WHERE c.id = ANY(ARRAY(SELECT DISTINCT id FROM ids)) AND c.metadata @> $8::jsonb
		),
		ex AS (
			SELECT cand.id, cand.layer_id, cand.document_id, ARRAY(SELECT (p.i - 1)::int FROM unnest($11::tsquery[]) WITH ORDINALITY p(q, i)
				WHERE cand.tsv @@ p.q ORDER BY p.i) AS exact
			FROM cand
		),
		` + scored + `,
		fin AS (
			SELECT scored.scope, scored.id, ex.layer_id, ex.document_id,
				bm25 + coalesce((SELECT sum(($12::float8[])[(scored.scope - 1) * $13 + i + 1]) FROM unnest(ex.exact) i), 0) AS score,
				ex.exact
			FROM scored JOIN ex ON ex.id = scored.id
		)
		SELECT scope, chunk_id, layer_id, document_id, score, exact FROM (
			SELECT scope, id AS chunk_id, layer_id, document_id, score, exact,
				row_number() OVER (PARTITION BY scope ORDER BY ` + order + `) AS n
			FROM fin) x
		WHERE n <= $14 ORDER BY scope, n`
	err = pgx.BeginTxFunc(ctx, s.db, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		// As in SearchBM25, keep the phrase matches on the GIN index. The
		// planner cannot know how many rows the CTEs hold and takes them
		// for a few: it would run nested loops over thousands of (search,
		// chunk, lexeme) rows, for minutes, and join the searches' chunks
		// with every document's lexemes before the chunks' own. So the
		// joins are hashed, in the order written; the lateral reads of
		// postings and phrase matches stay nested loops, the only way to
		// run them. Disabled plans cost 1e10, which would start the JIT
		// compiler (seconds): it stays off.
		if _, err := tx.Exec(ctx, `SELECT set_config('enable_seqscan', 'off', true), set_config('enable_nestloop', 'off', true),
			set_config('join_collapse_limit', '1', true), set_config('jit', 'off', true)`); err != nil {
			return err
		}
		read, err := readPostings(ctx, tx, lexemes, distinctLayers(qs), q0.Impact.PerTerm)
		if err != nil {
			return err
		}
		args[14], args[15] = manyCandidates(qs, lexemes, read)
		rows, err := tx.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		var scope int32
		var h LexHit
		var layer int64
		_, err = pgx.ForEachRow(rows, []any{&scope, &h.ChunkID, &layer, &h.DocumentID, &h.Score, &h.Exact}, func() error {
			hits[scope-1] = append(hits[scope-1], h)
			layerOf[h.ChunkID] = layer
			h.Exact = nil // pgx scans each row's array into a new slice
			return nil
		})
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("bm25 search of %d: %w", len(qs), err)
	}
	return hits, layerOf, nil
}

// scoredChunksMany scores each (search, candidate) on the candidate's
// own text with the search's idf and average length (SearchBM25Many; as
// scoredChunks): cu holds each candidate's query lexemes, unnested once
// for all the searches.
const scoredChunksMany = `cu AS MATERIALIZED (
			SELECT cand.id, cand.tsv_len, u.lexeme, array_length(u.positions, 1) AS tf
			FROM cand CROSS JOIN LATERAL unnest(ts_filter(setweight(cand.tsv, 'A', $20::text[]), '{a}')) u
		),
		scored AS (
			SELECT ids.scope, cu.id,
				sum(t.idf * (cu.tf * ($9 + 1.0)) /
					(cu.tf + $9 * (1.0 - $10 + $10 * cu.tsv_len / ($7::numeric[])[ids.scope]))) AS bm25
			FROM ids JOIN cu ON cu.id = ids.id JOIN t ON t.scope = ids.scope AND t.lexeme = cu.lexeme
			GROUP BY ids.scope, cu.id
		)`

// scoredInDocumentsMany scores each (search, candidate) with the
// candidate's document evidence as scoredInDocuments does: cu holds the
// candidates' query lexemes (as in scoredChunksMany), docs their documents
// in layers whose preset is in $24 (every layer when it is NULL). du holds
// the query lexemes of every chunk of those documents that has one ($23
// matches any; the GIN index may find them), read once for all the
// searches, and dc counts each lexeme's chunks in each document. dn counts
// the documents' chunks; the document shares (dl) and their sums (dsum)
// are each search's, from its own shares and idf. A candidate of another
// layer has no row in dl or dsum and scores as in scoredChunksMany.
const scoredInDocumentsMany = `cu AS MATERIALIZED (
			SELECT cand.id, cand.document_id, cand.tsv_len, u.lexeme, array_length(u.positions, 1) AS tf
			FROM cand CROSS JOIN LATERAL unnest(ts_filter(setweight(cand.tsv, 'A', $20::text[]), '{a}')) u
		),
		docs AS MATERIALIZED (SELECT DISTINCT cand.document_id, cand.layer_id FROM cand
			JOIN strata.layers l ON l.id = cand.layer_id WHERE $24::text[] IS NULL OR l.preset = ANY($24::text[])),
		dn AS MATERIALIZED (
			SELECT c.document_id, count(*)::float8 AS nd FROM strata.chunks c
			WHERE c.document_id = ANY(ARRAY(SELECT document_id FROM docs)) GROUP BY c.document_id
		),
		du AS MATERIALIZED (
			SELECT c.document_id, u.lexeme
			FROM strata.chunks c CROSS JOIN LATERAL unnest(ts_filter(setweight(c.tsv, 'A', $20::text[]), '{a}')) u
			WHERE c.document_id = ANY(ARRAY(SELECT document_id FROM docs)) AND c.tsv @@ $23::tsquery
		),
		dc AS MATERIALIZED (
			SELECT du.document_id, du.lexeme, count(*)::float8 AS cf FROM du GROUP BY du.document_id, du.lexeme
		),
		dl AS MATERIALIZED (
			SELECT t.scope, dc.document_id, dc.lexeme,
				CASE WHEN dn.nd <= 1 THEN 0.0 ELSE greatest(0.0, 1.0 - t.share / (dc.cf / dn.nd)) END AS sigma, t.idf
			FROM dc JOIN dn ON dn.document_id = dc.document_id
				JOIN docs ON docs.document_id = dc.document_id
				JOIN sl ON sl.layer_id = docs.layer_id
				JOIN t ON t.scope = sl.scope AND t.lexeme = dc.lexeme
		),
		dsum AS MATERIALIZED (
			SELECT dl.scope, dl.document_id, sum(dl.idf * dl.sigma) AS ctx FROM dl GROUP BY dl.scope, dl.document_id
		),
		scored AS (
			SELECT ids.scope, cu.id,
				sum(t.idf * (1.0 - $21::float8 * coalesce(dl.sigma, 0.0)) *
					(cu.tf * ($9 + 1.0)) /
					(cu.tf + $9 * (1.0 - $10 + $10 * cu.tsv_len / ($7::numeric[])[ids.scope])))
				+ $22::float8 * $21::float8 * coalesce(min(dsum.ctx), 0.0) AS bm25
			FROM ids JOIN cu ON cu.id = ids.id JOIN t ON t.scope = ids.scope AND t.lexeme = cu.lexeme
				LEFT JOIN dl ON dl.scope = ids.scope AND dl.document_id = cu.document_id AND dl.lexeme = cu.lexeme
				LEFT JOIN dsum ON dsum.scope = ids.scope AND dsum.document_id = cu.document_id
			GROUP BY ids.scope, cu.id
		)`
