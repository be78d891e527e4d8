package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"github.com/stratakb/stratakb/schema"
)

// Layer is what search needs to know about a layer.
type Layer struct {
	ID              int64
	Name            string
	Description     string
	RoutingPatterns []string
	AnswerMode      string
	// Preset is the defaults bundle the layer was added with (ingestd add
	// --preset): "", "docs" or "contracts".
	Preset string
}

// Layers returns every layer, by name.
func (s *Corpus) Layers(ctx context.Context) ([]Layer, error) {
	rows, err := s.db.Query(ctx, `SELECT id, name, description, routing_patterns, answer_mode, preset
		FROM strata.layers ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list layers: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[Layer])
	if err != nil {
		return nil, fmt.Errorf("list layers: %w", err)
	}
	return out, nil
}

// Version returns a value that changes whenever a layer is added, changed or
// removed, a layer's chunks change (the statistics triggers stamp
// lexical_layer_stats.changed_at), an embedding model's progress on a layer
// changes, an ingest run finishes, or a model's search parameters change.
// It reads small tables and the latest row of ingest_runs; the result cache
// compares it on every search.
func (s *Corpus) Version(ctx context.Context) (string, error) {
	var layers int64
	var a, b, c, d, e *time.Time
	err := s.db.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM strata.layers) + coalesce((SELECT max(id) FROM strata.layers), 0) * 1000003,
		(SELECT max(updated_at) FROM strata.layers),
		(SELECT max(changed_at) FROM strata.lexical_layer_stats),
		(SELECT max(updated_at) FROM strata.layer_models),
		(SELECT max(coalesce(finished_at, started_at)) FROM strata.ingest_runs),
		(SELECT max(updated_at) FROM strata.model_search_params)`).Scan(&layers, &a, &b, &c, &d, &e)
	if err != nil {
		return "", fmt.Errorf("read data version: %w", err)
	}
	var sb strings.Builder
	sb.WriteString(strconv.FormatInt(layers, 10))
	for _, t := range []*time.Time{a, b, c, d, e} {
		sb.WriteByte('|')
		if t != nil {
			sb.WriteString(strconv.FormatInt(t.UnixNano(), 10))
		}
	}
	return sb.String(), nil
}

// LexicalStats is what BM25 needs about the searched layers: their chunk
// count, total length in lexemes, and each query lexeme's document
// frequency.
type LexicalStats struct {
	Chunks   int64
	TotalLen int64
	DF       map[string]int64
}

// LexicalPrep is what the lexical channel reads before it scores: the
// query's lexemes, the layers' statistics for them, and for each exact term
// its phrase tsquery ("" when it has no lexeme) and lexemes.
type LexicalPrep struct {
	Lexemes       []string
	Stats         LexicalStats
	Phrases       []string
	PhraseLexemes [][]string
}

// PrepareLexical reads, in one round trip, the lexemes of query, the
// statistics of the layers for them, and the phrase queries of terms.
func (s *Corpus) PrepareLexical(ctx context.Context, query string, terms []string, layerIDs []int64) (LexicalPrep, error) {
	p := LexicalPrep{Stats: LexicalStats{DF: map[string]int64{}}}
	if terms == nil {
		terms = []string{}
	}
	b := &pgx.Batch{}
	b.Queue(`SELECT q.lexeme, coalesce((SELECT sum(df) FROM strata.lexeme_stats s
			WHERE s.lexeme = q.lexeme AND s.layer_id = ANY($2)), 0)::bigint
		FROM unnest(to_tsvector('english', $1)) q ORDER BY q.lexeme`, query, layerIDs).Query(func(rows pgx.Rows) error {
		var l string
		var n int64
		_, err := pgx.ForEachRow(rows, []any{&l, &n}, func() error {
			p.Lexemes = append(p.Lexemes, l)
			p.Stats.DF[l] = n
			return nil
		})
		return err
	})
	b.Queue(`SELECT coalesce(sum(chunks), 0)::bigint, coalesce(sum(total_len), 0)::bigint
		FROM strata.lexical_layer_stats WHERE layer_id = ANY($1)`, layerIDs).QueryRow(func(row pgx.Row) error {
		return row.Scan(&p.Stats.Chunks, &p.Stats.TotalLen)
	})
	b.Queue(`SELECT coalesce(phraseto_tsquery('english', t)::text, ''),
			ARRAY(SELECT lexeme FROM unnest(to_tsvector('english', t)))
		FROM unnest($1::text[]) WITH ORDINALITY x(t, i) ORDER BY i`, terms).Query(func(rows pgx.Rows) error {
		var q string
		var ls []string // pgx scans each row's array into a new slice
		_, err := pgx.ForEachRow(rows, []any{&q, &ls}, func() error {
			p.Phrases = append(p.Phrases, q)
			p.PhraseLexemes = append(p.PhraseLexemes, ls)
			return nil
		})
		return err
	})
	if err := s.db.SendBatch(ctx, b).Close(); err != nil {
		return p, fmt.Errorf("prepare lexical search: %w", err)
	}
	return p, nil
}

// LexemeDF returns the lexemes of words (english configuration) with their
// document frequency in the layers: the words a query is expanded with.
func (s *Corpus) LexemeDF(ctx context.Context, words string, layerIDs []int64) (map[string]int64, error) {
	rows, err := s.db.Query(ctx, `SELECT q.lexeme, coalesce((SELECT sum(df) FROM strata.lexeme_stats s
			WHERE s.lexeme = q.lexeme AND s.layer_id = ANY($2)), 0)::bigint
		FROM unnest(to_tsvector('english', $1)) q`, words, layerIDs)
	if err != nil {
		return nil, fmt.Errorf("read expansion lexemes: %w", err)
	}
	out := map[string]int64{}
	var l string
	var n int64
	if _, err := pgx.ForEachRow(rows, []any{&l, &n}, func() error { out[l] = n; return nil }); err != nil {
		return nil, fmt.Errorf("read expansion lexemes: %w", err)
	}
	return out, nil
}

// ChunkLayers returns the layer of each chunk id (ids no longer stored are
// absent).
func (s *Corpus) ChunkLayers(ctx context.Context, ids []int64) (map[int64]int64, error) {
	rows, err := s.db.Query(ctx, `SELECT id, layer_id FROM strata.chunks WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, fmt.Errorf("read the chunks' layers: %w", err)
	}
	out := make(map[int64]int64, len(ids))
	var id, layer int64
	if _, err := pgx.ForEachRow(rows, []any{&id, &layer}, func() error { out[id] = layer; return nil }); err != nil {
		return nil, fmt.Errorf("read the chunks' layers: %w", err)
	}
	return out, nil
}

// LexemesDF returns the document frequency of each lexeme (already in the
// english configuration's form) in the layers, 0 for one in none of them.
func (s *Corpus) LexemesDF(ctx context.Context, lexemes []string, layerIDs []int64) (map[string]int64, error) {
	rows, err := s.db.Query(ctx, `SELECT q.l, coalesce((SELECT sum(df) FROM strata.lexeme_stats s
			WHERE s.lexeme = q.l AND s.layer_id = ANY($2)), 0)::bigint
		FROM unnest($1::text[]) AS q(l)`, lexemes, layerIDs)
	if err != nil {
		return nil, fmt.Errorf("read lexeme frequencies: %w", err)
	}
	out := make(map[string]int64, len(lexemes))
	var l string
	var n int64
	if _, err := pgx.ForEachRow(rows, []any{&l, &n}, func() error { out[l] = n; return nil }); err != nil {
		return nil, fmt.Errorf("read lexeme frequencies: %w", err)
	}
	return out, nil
}

// BM25Query is one lexical search.
type BM25Query struct {
	LayerIDs []int64
	// Terms and IDF are the query lexemes and their inverse document
	// frequencies; only these lexemes score.
	Terms []string
	IDF   []float64
	// Match is the tsquery (text form) that selects candidates through the
	// GIN index on chunks.tsv. It is used when Impact is nil.
	Match string
	// Impact, when set, selects the candidates from strata.postings instead:
	// the best-impact postings of each query lexeme, then the chunks with the
	// highest sum of idf x impact.
	Impact *ImpactSelect
	// Phrases are tsqueries (text form) of terms that must match as written;
	// a chunk's Exact count is how many of them it matches.
	Phrases []string
	// Filter is a JSON object every candidate's metadata must contain.
	Filter        map[string]string
	K1, B, AvgLen float64
	Limit         int
	// ExactFirst ranks chunks matching more phrases first.
	ExactFirst bool
	// PhraseBoosts are added to the score for each phrase matched (one per
	// phrase).
	PhraseBoosts []float64
	// DocTermDiscount and DocContext bring in the candidate's document (see
	// SearchBM25); both 0 score each chunk on its own.
	DocTermDiscount, DocContext float64
	// DocPresets are the layer presets whose documents bring that evidence
	// (the others' chunks score on their own); nil: every layer.
	DocPresets []string
	// Share is each term's share of the searched chunks holding it (df/N),
	// which the document evidence compares with its share of a document's
	// chunks.
	Share []float64
}

// ImpactSelect bounds the candidates of an impact-ordered lexical search.
type ImpactSelect struct {
	// PerTerm is how many postings, best impact first, each query lexeme
	// contributes in each layer.
	PerTerm int
	// Candidates is how many chunks, by sum of idf x impact, are scored
	// exactly.
	Candidates int
	// PhraseMatch, when not empty, is a tsquery (text form) whose matching
	// chunks are candidates too, at most PhraseLimit of them: chunks holding
	// an exact term whose words are all too common for their postings to
	// reach them.
	PhraseMatch string
	PhraseLimit int
}

// LexHit is one chunk the lexical channel scored.
type LexHit struct {
	ChunkID int64
	// DocumentID is the chunk's document (0 where the hit was made
	// without it).
	DocumentID int64
	Score      float64
	// Exact holds the indexes (into BM25Query.Phrases) of the phrases the
	// chunk matches.
	Exact []int32
}

// SearchBM25 scores the chunks that match q.Match in the layers (the GIN
// index chunks_tsv selects their ids; the primary key fetches those rows,
// whose layer and metadata are then checked) with Okapi BM25 over their english lexemes: for each query
// lexeme in the chunk, idf · tf·(k1+1) / (tf + k1·(1 − b + b·len/avglen)),
// tf being the lexeme's positions in tsv and len the generated tsv_len.
// setweight marks the query lexemes and ts_filter keeps only them, so each
// candidate's tsvector is cut to a few lexemes in C before it is unnested.
//
// With DocTermDiscount or DocContext set, the candidate's document counts
// too. A query lexeme's lift in a document is its share of the document's
// chunks over its share of the searched chunks (cf/nd over df/N), and its
// document share sigma = max(0, 1 − 1/lift): near 1 for a term the
// document concentrates (a party's name, found in this contract and
// nowhere else), 0 for one no commoner there than anywhere (governing,
// law, terminate). DocTermDiscount (a) takes a·sigma of the lexeme's weight
// off the chunk's BM25 sum, and DocContext (c) gives every chunk of the
// document c·a·sigma·idf for each query lexeme the document holds, whether
// the chunk holds it or not: the names select the document and lift all
// its chunks alike, the rest of the question chooses among them. A
// one-chunk document has sigma 0 and scores as without them. Only the
// documents of layers whose preset is in DocPresets bring evidence (nil:
// every layer's); a chunk of another layer scores on its own.
func (s *Corpus) SearchBM25(ctx context.Context, q BM25Query) ([]LexHit, error) {
	filter, err := json.Marshal(nonNilMap(q.Filter))
	if err != nil {
		return nil, fmt.Errorf("bm25 search: %w", err)
	}
	phrases := q.Phrases
	if phrases == nil {
		phrases = []string{}
	}
	boosts := q.PhraseBoosts
	for len(boosts) < len(phrases) {
		boosts = append(boosts, 0)
	}
	order := "score DESC, id"
	if q.ExactFirst {
		order = "cardinality(exact) DESC, score DESC, id"
	}
	var out []LexHit
	err = pgx.BeginTxFunc(ctx, s.db, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		// The planner prices tsv @@ without the cost of reading each
		// tsvector out of TOAST, and on small layers would rather scan and
		// decompress every chunk than take the GIN index: keep it on the
		// index.
		if _, err := tx.Exec(ctx, `SELECT set_config('enable_seqscan', 'off', true)`); err != nil {
			return err
		}
		// ids: the candidates, from the GIN index (Match) or from the
		// postings (Impact): each lexeme's best chunks in a layer, from its
		// posting list and from the postings not packed yet, read here and
		// ranked by impactCandidates (the work of strata.best_postings,
		// migration 0028, at a fraction of the database's time).
		// The GIN path checks layer and filter with the match, so a
		// selective filter can narrow the candidates through the
		// chunks_metadata index before any row is read.
		ids := `ids AS MATERIALIZED (SELECT c.id FROM strata.chunks c
			WHERE c.tsv @@ $11::tsquery AND c.layer_id = ANY($3) AND c.metadata @> $4::jsonb)`
		args := []any{q.Terms, q.IDF, q.LayerIDs, string(filter), q.K1, q.B, q.AvgLen, phrases, boosts, q.Limit, q.Match}
		if im := q.Impact; im != nil {
			read, err := readPostings(ctx, tx, q.Terms, q.LayerIDs, im.PerTerm)
			if err != nil {
				return err
			}
			ids = `ids AS MATERIALIZED ((SELECT unnest($11::bigint[]) AS id)`
			args = append(args[:10], impactCandidates(read, q.IDF, im.PerTerm, im.Candidates))
			if im.PhraseMatch != "" {
				ids += `
				UNION (SELECT c.id FROM strata.chunks c WHERE c.tsv @@ $12::tsquery AND c.layer_id = ANY($3) LIMIT $13)`
				args = append(args, im.PhraseMatch, im.PhraseLimit)
			}
			ids += ")"
		}
		scored := scoredChunks
		if q.DocTermDiscount != 0 || q.DocContext != 0 {
			n := len(args)
			share := q.Share
			for len(share) < len(q.Terms) {
				share = append(share, 0)
			}
			scored = strings.NewReplacer("$DA", "$"+strconv.Itoa(n+1), "$DC", "$"+strconv.Itoa(n+2),
				"$DS", "$"+strconv.Itoa(n+3), "$DP", "$"+strconv.Itoa(n+4)).Replace(scoredInDocuments)
			args = append(args, q.DocTermDiscount, q.DocContext, share, q.DocPresets)
		}
		rows, err := tx.Query(ctx, `
		WITH q AS (SELECT * FROM unnest($1::text[], $2::float8[]) AS t(lexeme, idf)),
		`+ids+`,
		cand AS (
			SELECT c.id, c.layer_id, c.document_id, c.tsv, c.tsv_len FROM strata.chunks c
			WHERE c.id = ANY(ARRAY(SELECT id FROM ids)) AND c.layer_id = ANY($3) AND c.metadata @> $4::jsonb
		),
		`+scored+`
		SELECT id AS chunk_id, document_id, bm25 + coalesce((SELECT sum(($9::float8[])[i + 1]) FROM unnest(exact) i), 0) AS score, exact
		FROM scored
		ORDER BY `+order+` LIMIT $10`, args...)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowToStructByName[LexHit])
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("bm25 search: %w", err)
	}
	return out, nil
}

// scoredChunks scores each candidate on its own text (SearchBM25).
const scoredChunks = `scored AS (
			SELECT cand.id, cand.document_id,
				sum(q.idf * (array_length(u.positions, 1) * ($5 + 1.0)) /
					(array_length(u.positions, 1) + $5 * (1.0 - $6 + $6 * cand.tsv_len / $7))) AS bm25,
				ARRAY(SELECT (p.i - 1)::int FROM unnest($8::tsquery[]) WITH ORDINALITY p(q, i)
					WHERE cand.tsv @@ p.q ORDER BY p.i) AS exact
			FROM cand CROSS JOIN LATERAL unnest(ts_filter(setweight(cand.tsv, 'A', $1::text[]), '{a}')) u
				JOIN q ON q.lexeme = u.lexeme
			GROUP BY cand.id, cand.document_id, cand.tsv
		)`

// scoredInDocuments scores each candidate with its document's evidence
// (SearchBM25; $DA, $DC, $DS and $DP stand for the parameters holding
// DocTermDiscount, DocContext, Share and DocPresets). Only the documents of
// layers whose preset is in DocPresets (every layer when it is NULL) speak:
// docs holds the candidates' documents in them, dn counts their chunks, dl
// each query lexeme's chunks in each of them (every chunk of those
// documents is read, its tsvector cut to the query's lexemes first) and its
// document share sigma, dsum the idf·sigma of the lexemes each document
// holds. A candidate of another layer has no row in dl or dsum and scores
// as in scoredChunks.
const scoredInDocuments = `docs AS MATERIALIZED (SELECT DISTINCT cand.document_id FROM cand
			JOIN strata.layers l ON l.id = cand.layer_id WHERE $DP::text[] IS NULL OR l.preset = ANY($DP::text[])),
		dn AS MATERIALIZED (
			SELECT c.document_id, count(*)::float8 AS nd FROM strata.chunks c
			WHERE c.document_id IN (SELECT document_id FROM docs) GROUP BY c.document_id
		),
		qs AS (SELECT * FROM unnest($1::text[], $2::float8[], $DS::float8[]) AS t(lexeme, idf, share)),
		dl AS MATERIALIZED (
			SELECT x.document_id, x.lexeme, x.idf,
				CASE WHEN dn.nd <= 1 THEN 0.0 ELSE greatest(0.0, 1.0 - x.share / (x.cf / dn.nd)) END AS sigma
			FROM (SELECT c.document_id, u.lexeme, min(qs.idf) AS idf, min(qs.share) AS share, count(*)::float8 AS cf
				FROM strata.chunks c CROSS JOIN LATERAL unnest(ts_filter(setweight(c.tsv, 'A', $1::text[]), '{a}')) u
				JOIN qs ON qs.lexeme = u.lexeme
				WHERE c.document_id IN (SELECT document_id FROM docs)
				GROUP BY c.document_id, u.lexeme) x
			JOIN dn ON dn.document_id = x.document_id
		),
		dsum AS MATERIALIZED (
			SELECT dl.document_id, sum(dl.idf * dl.sigma) AS ctx FROM dl GROUP BY dl.document_id
		),
		scored AS (
			SELECT cand.id, cand.document_id,
				sum(q.idf * (1.0 - $DA::float8 * coalesce(dl.sigma, 0.0)) *
					(array_length(u.positions, 1) * ($5 + 1.0)) /
					(array_length(u.positions, 1) + $5 * (1.0 - $6 + $6 * cand.tsv_len / $7)))
				+ $DC::float8 * $DA::float8 * coalesce(min(dsum.ctx), 0.0) AS bm25,
				ARRAY(SELECT (p.i - 1)::int FROM unnest($8::tsquery[]) WITH ORDINALITY p(q, i)
					WHERE cand.tsv @@ p.q ORDER BY p.i) AS exact
			FROM cand CROSS JOIN LATERAL unnest(ts_filter(setweight(cand.tsv, 'A', $1::text[]), '{a}')) u
				JOIN q ON q.lexeme = u.lexeme
				LEFT JOIN dl ON dl.document_id = cand.document_id AND dl.lexeme = u.lexeme
				LEFT JOIN dsum ON dsum.document_id = cand.document_id
			GROUP BY cand.id, cand.document_id, cand.tsv
		)`

// CompleteLayers returns which of the layers have every chunk embedded by
// model (strata.layer_models.complete).
func (s *Corpus) CompleteLayers(ctx context.Context, model string, layerIDs []int64) ([]int64, error) {
	rows, err := s.db.Query(ctx, `SELECT layer_id FROM strata.layer_models
		WHERE model = $1 AND complete AND layer_id = ANY($2) ORDER BY layer_id`, model, layerIDs)
	if err != nil {
		return nil, fmt.Errorf("read layer models: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("read layer models: %w", err)
	}
	return ids, nil
}

// LayerModels returns, for each of the layers, the models whose vectors
// are complete for it, newest first (by completion).
func (s *Corpus) LayerModels(ctx context.Context, layerIDs []int64) (map[int64][]string, error) {
	rows, err := s.db.Query(ctx, `SELECT layer_id, model FROM strata.layer_models
		WHERE complete AND layer_id = ANY($1) ORDER BY layer_id, completed_at DESC NULLS LAST, model`, layerIDs)
	if err != nil {
		return nil, fmt.Errorf("read layer models: %w", err)
	}
	defer rows.Close()
	out := map[int64][]string{}
	for rows.Next() {
		var id int64
		var model string
		if err := rows.Scan(&id, &model); err != nil {
			return nil, fmt.Errorf("read layer models: %w", err)
		}
		out[id] = append(out[id], model)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read layer models: %w", err)
	}
	return out, nil
}

// ModelParams are the search parameters measured for an embedding model.
type ModelParams struct {
	RRFK             int
	LexicalWeight    float64
	VectorWeight     float64
	EFSearch         int
	ConfidenceHigh   float64
	ConfidenceMedium float64
	MinSimilarity    float64
	MeasuredOn       string
	// ContractsVectorWeight, when not nil, is the vector weight of a
	// search whose layers all have the contracts preset.
	ContractsVectorWeight *float64
}

// ModelParams reads the model's row of strata.model_search_params; ok is
// false when the model has none.
func (s *Corpus) ModelParams(ctx context.Context, model string) (p ModelParams, ok bool, err error) {
	err = s.db.QueryRow(ctx, `SELECT rrf_k, lexical_weight, vector_weight, ef_search, confidence_high,
		confidence_medium, min_similarity, measured_on, contracts_vector_weight FROM strata.model_search_params WHERE model = $1`, model).Scan(
		&p.RRFK, &p.LexicalWeight, &p.VectorWeight, &p.EFSearch, &p.ConfidenceHigh, &p.ConfidenceMedium, &p.MinSimilarity, &p.MeasuredOn,
		&p.ContractsVectorWeight)
	if err == pgx.ErrNoRows {
		return p, false, nil
	}
	if err != nil {
		return p, false, fmt.Errorf("read search parameters of %s: %w", model, err)
	}
	return p, true, nil
}

// VectorQuery is one nearest-neighbour search.
type VectorQuery struct {
	Model    string
	Dims     int
	Vector   []float32
	LayerIDs []int64
	Filter   map[string]string
	Limit    int // chunks wanted
	EFSearch int
}

// VecHit is one chunk the vector channel found: the best cosine similarity
// over its window vectors.
type VecHit struct {
	ChunkID int64
	LayerID int64
	// DocumentID is the chunk's document, where the search read it
	// (SearchVectors; 0 otherwise).
	DocumentID int64 `db:"-"`
	Similarity float64
}

// SearchVectors finds the chunks of the layers whose window vectors are
// nearest the query vector. The model's HNSW index (the expression
// embedding::halfvec(dims), partial on the model; the vectors are stored as
// half-precision floats since migration 0027, and so is the query vector
// compared) orders the windows; with
// hnsw.iterative_scan = relaxed_order the scan goes on until the layer and
// metadata filters (checked per window through chunks_content_hash) have let
// through enough windows, so filtered searches still fill the limit. Windows
// are then grouped by chunk, the best window winning.
func (s *Corpus) SearchVectors(ctx context.Context, q VectorQuery) ([]VecHit, error) {
	filter, err := json.Marshal(nonNilMap(q.Filter))
	if err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	if q.Dims <= 0 || q.Dims != len(q.Vector) {
		return nil, fmt.Errorf("vector search: query vector has %d dimensions, model %s has %d", len(q.Vector), q.Model, q.Dims)
	}
	dist := fmt.Sprintf("(e.embedding::halfvec(%d) <=> $1::halfvec(%d))", q.Dims, q.Dims)
	// The model is inlined as schema.ModelLiteral writes it: the HNSW index
	// is partial on model = '<name>' in the same words, and the planner
	// proves that predicate only from a literal, never from a parameter of a
	// generic plan.
	// Several windows of one chunk may come first: ask for twice the chunks.
	windows := q.Limit * 2
	sql := `
		WITH nn AS MATERIALIZED (
			SELECT e.content_hash, ` + dist + ` AS dist
			FROM strata.embeddings e
			WHERE e.model = ` + schema.ModelLiteral(q.Model) + `
			AND EXISTS (SELECT 1 FROM strata.chunks c WHERE c.content_hash = e.content_hash
				AND c.layer_id = ANY($2) AND c.metadata @> $3::jsonb)
			ORDER BY ` + dist + `
			LIMIT $4
		)
		SELECT c.id AS chunk_id, c.layer_id AS layer_id, c.document_id, 1 - min(nn.dist) AS similarity
		FROM nn JOIN strata.chunks c ON c.content_hash = nn.content_hash
		WHERE c.layer_id = ANY($2) AND c.metadata @> $3::jsonb
		GROUP BY c.id, c.layer_id, c.document_id ORDER BY similarity DESC, c.id LIMIT $5`
	var out []VecHit
	err = pgx.BeginTxFunc(ctx, s.db, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		ef := q.EFSearch
		if ef <= 0 {
			ef = 100
		}
		if _, err := tx.Exec(ctx, `SELECT set_config('hnsw.ef_search', $1, true),
			set_config('hnsw.iterative_scan', 'relaxed_order', true),
			set_config('plan_cache_mode', 'force_custom_plan', true)`, strconv.Itoa(ef)); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, sql, pgvector.NewVector(q.Vector), q.LayerIDs, string(filter), windows, q.Limit)
		if err != nil {
			return err
		}
		var h VecHit
		_, err = pgx.ForEachRow(rows, []any{&h.ChunkID, &h.LayerID, &h.DocumentID, &h.Similarity}, func() error {
			out = append(out, h)
			return nil
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	return out, nil
}

// Similarities returns, for each chunk that has vectors of the model, the
// cosine similarity of its best window to the query vector. Chunks without
// a vector are missing from the map.
func (s *Corpus) Similarities(ctx context.Context, model string, vec []float32, chunkIDs []int64) (map[int64]float64, error) {
	out := map[int64]float64{}
	if len(chunkIDs) == 0 {
		return out, nil
	}
	dims := len(vec)
	rows, err := s.db.Query(ctx, fmt.Sprintf(`
		SELECT c.id, max(1 - (e.embedding::halfvec(%d) <=> $1::halfvec(%d)))
		FROM strata.chunks c JOIN strata.embeddings e ON e.content_hash = c.content_hash AND e.model = $2
			AND e.dims = %d
		WHERE c.id = ANY($3) GROUP BY c.id`, dims, dims, dims), pgvector.NewVector(vec), model, chunkIDs)
	if err != nil {
		return nil, fmt.Errorf("similarities: %w", err)
	}
	var id int64
	var sim float64
	if _, err := pgx.ForEachRow(rows, []any{&id, &sim}, func() error { out[id] = sim; return nil }); err != nil {
		return nil, fmt.Errorf("similarities: %w", err)
	}
	return out, nil
}

// SpanSimilarity returns the best similarity of the chunks of a document
// that overlap [start, end), 0 when none has a vector.
func (s *Corpus) SpanSimilarity(ctx context.Context, model string, vec []float32, docID int64, start, end int) (float64, error) {
	dims := len(vec)
	var sim *float64
	err := s.db.QueryRow(ctx, fmt.Sprintf(`
		SELECT max(1 - (e.embedding::halfvec(%d) <=> $1::halfvec(%d)))
		FROM strata.chunks c JOIN strata.embeddings e ON e.content_hash = c.content_hash AND e.model = $2
			AND e.dims = %d
		WHERE c.document_id = $3 AND c.start_off < $5 AND c.end_off > $4`, dims, dims, dims),
		pgvector.NewVector(vec), model, docID, start, end).Scan(&sim)
	if err != nil {
		return 0, fmt.Errorf("span similarity: %w", err)
	}
	if sim == nil {
		return 0, nil
	}
	return *sim, nil
}

// Chunks returns the hits for the chunk ids, with what a citation needs, in
// no particular order.
func (s *Corpus) Chunks(ctx context.Context, ids []int64) (map[int64]Hit, error) {
	rows, err := s.db.Query(ctx, `
		SELECT c.id AS chunk_id, c.document_id, l.name AS layer, d.path AS file, c.start_off AS start,
			c.end_off AS "end", c.line_start, c.line_end, c.page, c.clause_path, c.text
		FROM strata.chunks c
		JOIN strata.documents d ON d.id = c.document_id
		JOIN strata.layers l ON l.id = c.layer_id
		WHERE c.id = ANY($1)`, ids)
	if err != nil {
		return nil, fmt.Errorf("read chunks: %w", err)
	}
	// A chunk has no score: the struct's Score stays zero.
	hits, err := pgx.CollectRows(rows, pgx.RowToStructByNameLax[Hit])
	if err != nil {
		return nil, fmt.Errorf("read chunks: %w", err)
	}
	out := make(map[int64]Hit, len(hits))
	for _, h := range hits {
		out[h.ChunkID] = h
	}
	return out, nil
}

// Section is a section of the structure map that a reference matched, with
// its text.
type Section struct {
	ID         int64
	DocumentID int64
	Layer      string
	File       string
	Key        string
	Number     string
	Title      string
	ClausePath string
	Start, End int
	LineStart  int
	LineEnd    int
	Page       *int
	Text       string
}

// SectionsByKeys returns the sections of the layers whose ref_key is one of
// keys (the index sections_ref_key serves it), by file path then position,
// at most limit. With a metadata filter, only sections overlapping a chunk
// whose metadata matches it count. Line numbers count from 1; the page is
// the one the section starts on.
func (s *Corpus) SectionsByKeys(ctx context.Context, keys []string, layerIDs []int64, filter map[string]string, limit int) ([]Section, error) {
	return s.SectionsByKeysIn(ctx, keys, layerIDs, nil, filter, limit)
}

// SectionsByKeysIn is SectionsByKeys within the documents docIDs of the
// layers; nil docIDs means every document.
func (s *Corpus) SectionsByKeysIn(ctx context.Context, keys []string, layerIDs, docIDs []int64, filter map[string]string, limit int) ([]Section, error) {
	fj, err := json.Marshal(nonNilMap(filter))
	if err != nil {
		return nil, fmt.Errorf("look up sections: %w", err)
	}
	rows, err := s.db.Query(ctx, `
		SELECT s.id, s.document_id, l.name AS layer, d.path AS file, s.ref_key AS key, s.number, s.title,
			s.clause_path, s.start_off AS start, s.end_off AS "end",
			1 + length(t.before) - length(replace(t.before, E'\n', '')) AS line_start,
			1 + length(t.before) - length(replace(t.before, E'\n', '')) +
				length(rtrim(t.body, E'\n')) - length(replace(rtrim(t.body, E'\n'), E'\n', '')) AS line_end,
			(SELECT p.number FROM strata.pages p WHERE p.document_id = d.id AND p.start_off <= s.start_off
				ORDER BY p.start_off DESC LIMIT 1) AS page,
			t.body AS text
		FROM strata.sections s
		JOIN strata.documents d ON d.id = s.document_id AND d.status = 'ok' AND d.body IS NOT NULL
		JOIN strata.layers l ON l.id = s.layer_id
		CROSS JOIN LATERAL (SELECT convert_to(d.body, 'UTF8') AS b) raw
		CROSS JOIN LATERAL (SELECT
			convert_from(substring(raw.b FROM 1 FOR s.start_off), 'UTF8') AS before,
			convert_from(substring(raw.b FROM s.start_off + 1 FOR s.end_off - s.start_off), 'UTF8') AS body) t
		WHERE s.ref_key = ANY($1) AND s.layer_id = ANY($2)
		AND ($5::bigint[] IS NULL OR s.document_id = ANY($5))
		AND ($4::jsonb = '{}'::jsonb OR EXISTS (SELECT 1 FROM strata.chunks c WHERE c.document_id = s.document_id
			AND c.start_off < s.end_off AND c.end_off > s.start_off AND c.metadata @> $4::jsonb))
		ORDER BY d.path, s.start_off
		LIMIT $3`, keys, layerIDs, limit, string(fj), docIDs)
	if err != nil {
		return nil, fmt.Errorf("look up sections: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[Section])
	if err != nil {
		return nil, fmt.Errorf("look up sections: %w", err)
	}
	return out, nil
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// LayerIDs are the layers' ids, in their order.
func LayerIDs(ls []Layer) []int64 {
	out := make([]int64, len(ls))
	for i, l := range ls {
		out[i] = l.ID
	}
	return out
}

// LayerNames are the layers' names, sorted.
func LayerNames(ls []Layer) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Name
	}
	sort.Strings(out)
	return out
}
