package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"
)

// NamedDoc is a document a question may name: by one of its identity keys
// (migration 0023) or by its title.
type NamedDoc struct {
	DocumentID int64    `db:"id"`
	LayerID    int64    `db:"layer_id"`
	Layer      string   `db:"layer"`
	File       string   `db:"file"`
	Title      string   `db:"title"`
	Keys       []string `db:"keys"`
}

// DocumentsNamed returns the documents of the layers whose identity holds
// one of keys: the numbers a question writes ("pep 572") and the runs of
// its words as title keys ("t:organizing go code"; structure.TitleKeys).
// They are the candidates, found through the identity's GIN index; the
// caller decides whether a title match names the document. At most limit,
// by path.
func (s *Corpus) DocumentsNamed(ctx context.Context, layerIDs []int64, keys []string, limit int) ([]NamedDoc, error) {
	// One index probe per key, the matches kept apart from the ordering:
	// written as "identity && keys" the planner estimated that a long
	// question's hundreds of title keys match half the documents and read
	// every document's identity (5 ms on 5,183 documents against 0.1, and
	// linear in the documents); with the probes in the same query as the
	// ORDER BY and LIMIT it could walk every document in path order and
	// test each key against it (154 ms when none matches).
	rows, err := s.db.Query(ctx, `
		WITH hit AS MATERIALIZED (
			SELECT DISTINCT h.id FROM unnest($2::text[]) k(key)
			JOIN strata.documents h ON h.identity @> ARRAY[k.key])
		SELECT d.id, d.layer_id, l.name AS layer, d.path AS file, d.title, coalesce(d.identity, '{}') AS keys
		FROM strata.documents d JOIN strata.layers l ON l.id = d.layer_id
		WHERE d.id = ANY(ARRAY(SELECT id FROM hit)) AND d.layer_id = ANY($1) AND d.status = 'ok'
		ORDER BY d.path LIMIT $3`, layerIDs, keys, limit)
	if err != nil {
		return nil, fmt.Errorf("find the documents the question names: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[NamedDoc])
	if err != nil {
		return nil, fmt.Errorf("find the documents the question names: %w", err)
	}
	return out, nil
}

// NearestInDocuments returns the chunks of the documents whose best window
// vector of model is nearest vec, best first, at most limit, with their
// similarity.
func (s *Corpus) NearestInDocuments(ctx context.Context, model string, vec []float32, docIDs []int64, limit int) ([]VecHit, error) {
	dims := len(vec)
	rows, err := s.db.Query(ctx, fmt.Sprintf(`
		SELECT c.id AS chunk_id, c.layer_id AS layer_id, max(1 - (e.embedding::vector(%d) <=> $1::vector(%d))) AS similarity
		FROM strata.chunks c JOIN strata.embeddings e ON e.content_hash = c.content_hash AND e.model = $2
			AND e.dims = %d
		WHERE c.document_id = ANY($3) GROUP BY c.id, c.layer_id ORDER BY similarity DESC, c.id LIMIT $4`, dims, dims, dims),
		pgvector.NewVector(vec), model, docIDs, limit)
	if err != nil {
		return nil, fmt.Errorf("search the named documents: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[VecHit])
	if err != nil {
		return nil, fmt.Errorf("search the named documents: %w", err)
	}
	return out, nil
}

// BestWordsInDocuments returns the chunks of the documents that best match
// the query's words (PostgreSQL's english ranking of any of them), best
// first, at most limit: the named documents' passages when there is no
// query vector.
func (s *Corpus) BestWordsInDocuments(ctx context.Context, query string, docIDs []int64, limit int) ([]int64, error) {
	rows, err := s.db.Query(ctx, `
		WITH q AS (SELECT to_tsquery('english', coalesce(nullif(array_to_string(
			array(SELECT quote_literal(lexeme) FROM unnest(to_tsvector('english', $1))), ' | '), ''), 'zzzzzz')) AS t)
		SELECT c.id FROM strata.chunks c, q WHERE c.document_id = ANY($2)
		ORDER BY ts_rank(c.tsv, q.t) DESC, c.document_id, c.ord LIMIT $3`, query, docIDs, limit)
	if err != nil {
		return nil, fmt.Errorf("search the named documents' words: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("search the named documents' words: %w", err)
	}
	return ids, nil
}

// OutlineEntry is one top-level part of a document's structure map.
type OutlineEntry struct {
	DocumentID int64  `db:"document_id"`
	Kind       string `db:"kind"`
	Number     string `db:"number"`
}

// DocumentOutlines returns the numbered sections of the documents at the
// least level each kind has in its document, in document order: what a
// note says exists when a named section does not.
func (s *Corpus) DocumentOutlines(ctx context.Context, docIDs []int64) ([]OutlineEntry, error) {
	rows, err := s.db.Query(ctx, `
		WITH m AS (SELECT document_id, kind, min(level) AS level FROM strata.sections
			WHERE document_id = ANY($1) AND number <> '' GROUP BY document_id, kind)
		SELECT s.document_id, s.kind, s.number FROM strata.sections s
		JOIN m ON m.document_id = s.document_id AND m.kind = s.kind AND m.level = s.level
		WHERE s.number <> '' ORDER BY s.document_id, s.ord LIMIT 2000`, docIDs)
	if err != nil {
		return nil, fmt.Errorf("read the named documents' sections: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[OutlineEntry])
	if err != nil {
		return nil, fmt.Errorf("read the named documents' sections: %w", err)
	}
	return out, nil
}

// NameShares returns, for each name, the share of the layers' chunks that
// hold its rarest word (english lexemes, from strata.lexeme_stats): an
// upper bound of the share of passages that hold the name. A name with no
// lexeme gets 0.
func (s *Corpus) NameShares(ctx context.Context, names []string, layerIDs []int64) ([]float64, error) {
	out := make([]float64, len(names))
	if len(names) == 0 || len(layerIDs) == 0 {
		return out, nil
	}
	var chunks int64
	if err := s.db.QueryRow(ctx, `SELECT coalesce(sum(chunks), 0)::bigint FROM strata.lexical_layer_stats
		WHERE layer_id = ANY($1)`, layerIDs).Scan(&chunks); err != nil {
		return nil, fmt.Errorf("read the layers' chunk counts: %w", err)
	}
	if chunks == 0 {
		return out, nil
	}
	rows, err := s.db.Query(ctx, `
		SELECT i, min(df) FROM (
			SELECT n.i, q.lexeme, coalesce(sum(st.df), 0)::bigint AS df
			FROM unnest($1::text[]) WITH ORDINALITY n(name, i)
			CROSS JOIN LATERAL unnest(to_tsvector('english', n.name)) q
			LEFT JOIN strata.lexeme_stats st ON st.lexeme = q.lexeme AND st.layer_id = ANY($2)
			GROUP BY n.i, q.lexeme) x
		GROUP BY i`, names, layerIDs)
	if err != nil {
		return nil, fmt.Errorf("read how common the question's names are: %w", err)
	}
	var i, df int64
	_, err = pgx.ForEachRow(rows, []any{&i, &df}, func() error {
		out[i-1] = float64(df) / float64(chunks)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read how common the question's names are: %w", err)
	}
	return out, nil
}

// NamesTogether reports whether some document of the layers holds every
// one of the words (the question's proper names, folded) in its chunks'
// text (read through their text search index), its title or its path
// (documents.name_tsv, migration 0029, through its own): one lexeme at a
// time, the documents that hold it, intersected.
func (s *Corpus) NamesTogether(ctx context.Context, layerIDs []int64, words []string) (bool, error) {
	if len(words) == 0 || len(layerIDs) == 0 {
		return true, nil
	}
	var ok bool
	err := s.db.QueryRow(ctx, `
		WITH lx AS (SELECT DISTINCT q.lexeme FROM unnest($2::text[]) w,
			LATERAL unnest(to_tsvector('english', w)) q)
		SELECT (SELECT count(*) FROM lx) = 0 OR EXISTS (
			SELECT 1 FROM lx
			JOIN LATERAL (SELECT c.document_id FROM strata.chunks c
				WHERE c.tsv @@ format('%L', lx.lexeme)::tsquery AND c.layer_id = ANY($1)
				UNION
				SELECT d.id FROM strata.documents d WHERE d.layer_id = ANY($1) AND d.status = 'ok'
				AND d.name_tsv @@ format('%L', lx.lexeme)::tsquery) d ON true
			GROUP BY d.document_id HAVING count(*) = (SELECT count(*) FROM lx))`, layerIDs, words).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("find a document that holds the question's names together: %w", err)
	}
	return ok, nil
}

// HasNumberedSections reports whether any document of the layers has a
// numbered section: without one, a section number cannot be looked up.
func (s *Corpus) HasNumberedSections(ctx context.Context, layerIDs []int64) (bool, error) {
	var ok bool
	err := s.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM strata.sections
		WHERE layer_id = ANY($1) AND ref_key IS NOT NULL)`, layerIDs).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("read whether the layers have numbered sections: %w", err)
	}
	return ok, nil
}

// DocumentsHolding returns the documents of the layers whose start (the
// first 3,000 characters of their text) or path holds every one of names
// (lower-case letters and digits: "cano", "petroleum"), the text folded
// the same way with the spaces dropped ("CANOPETROLEUM,INC" holds both),
// as a contract's preamble holds its parties' names: at most limit, by
// path.
func (s *Corpus) DocumentsHolding(ctx context.Context, layerIDs []int64, names []string, limit int) ([]NamedDoc, error) {
	// Each name is matched as a case-insensitive pattern that allows
	// anything but letters and digits between its characters, which is
	// what folding the text and searching it for the name finds, without
	// folding: 77 against 495 ms over SciFact's 5,183 documents (still a
	// read of every document's start).
	pats := make([]string, len(names))
	for i, n := range names {
		pats[i] = spacedPattern(n)
	}
	rows, err := s.db.Query(ctx, `
		SELECT d.id, d.layer_id, l.name AS layer, d.path AS file, d.title, coalesce(d.identity, '{}') AS keys
		FROM strata.documents d JOIN strata.layers l ON l.id = d.layer_id
		WHERE d.layer_id = ANY($1) AND d.status = 'ok'
		AND (d.path || ' ' || substr(coalesce(d.body, ''), 1, 3000)) ~* ALL ($2::text[])
		ORDER BY d.path LIMIT $3`, layerIDs, pats, limit)
	if err != nil {
		return nil, fmt.Errorf("find the documents that name the question's parties: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[NamedDoc])
	if err != nil {
		return nil, fmt.Errorf("find the documents that name the question's parties: %w", err)
	}
	return out, nil
}

// spacedPattern returns a PostgreSQL regular expression matching name's
// characters in order with anything but letters and digits between them
// ("cano" gives c[^[:alnum:]]*a[^[:alnum:]]*n[^[:alnum:]]*o). A character
// that is not a letter or digit is escaped, so it stands for itself.
func spacedPattern(name string) string {
	var b strings.Builder
	for i, r := range []rune(name) {
		if i > 0 {
			b.WriteString("[^[:alnum:]]*")
		}
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Series is what the layers hold of one series ("pep", "rfc").
type Series struct {
	// Keys are up to eight of its keys, in order: what a note lists when a
	// question names a number of the series that no document has.
	Keys []string
	// Share is the share of the layers' documents that have a number of
	// it: 1 for a folder of PEPs, small for the few release notes among a
	// blog's posts ("go 1.24").
	Share float64
}

// NumberKeys are the number keys ("pep 572", "rfc 5321") of the ok
// documents of some layers: Docs counts those documents, Keys holds the
// keys of each that has any.
type NumberKeys struct {
	Docs int
	Keys [][]string
}

// NumberKeysOf reads the number keys of the layers' documents: every
// identity key but the title keys ("t:…").
func (s *Corpus) NumberKeysOf(ctx context.Context, layerIDs []int64) (NumberKeys, error) {
	var nk NumberKeys
	if len(layerIDs) == 0 {
		return nk, nil
	}
	if err := s.db.QueryRow(ctx, `SELECT count(*) FROM strata.documents d WHERE d.layer_id = ANY($1) AND d.status = 'ok'`,
		layerIDs).Scan(&nk.Docs); err != nil {
		return nk, fmt.Errorf("count the layers' documents: %w", err)
	}
	rows, err := s.db.Query(ctx, `SELECT ks FROM (
			SELECT ARRAY(SELECT k FROM unnest(d.identity) k WHERE k NOT LIKE 't:%') AS ks
			FROM strata.documents d WHERE d.layer_id = ANY($1) AND d.status = 'ok' AND d.identity IS NOT NULL) x
		WHERE cardinality(ks) > 0`, layerIDs)
	if err != nil {
		return nk, fmt.Errorf("read the layers' document numbers: %w", err)
	}
	var ks []string
	_, err = pgx.ForEachRow(rows, []any{&ks}, func() error {
		nk.Keys = append(nk.Keys, ks)
		ks = nil // the next row's keys go into a new slice
		return nil
	})
	if err != nil {
		return nk, fmt.Errorf("read the layers' document numbers: %w", err)
	}
	return nk, nil
}

// SeriesHeld returns those of the series ("pep", "rfc") that some of the
// documents has a number of: up to eight of its keys in order, and the
// share of the documents that have one.
func (nk NumberKeys) SeriesHeld(series []string) map[string]Series {
	out := map[string]Series{}
	for _, sr := range series {
		if _, done := out[sr]; done {
			continue
		}
		prefix := sr + " "
		var keys []string
		docs := 0
		for _, ks := range nk.Keys {
			has := false
			for _, k := range ks {
				if strings.HasPrefix(k, prefix) {
					has = true
					keys = append(keys, k)
				}
			}
			if has {
				docs++
			}
		}
		if len(keys) == 0 {
			continue
		}
		slices.Sort(keys)
		keys = slices.Compact(keys)
		out[sr] = Series{Keys: keys[:min(8, len(keys))], Share: float64(docs) / float64(max(nk.Docs, 1))}
	}
	return out
}
