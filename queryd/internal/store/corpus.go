package store

import "context"

// Corpus reads what retrieval needs: layers, chunks, sections, the lexical
// statistics and postings, vectors and the models' search parameters. Its
// connections default to read-only transactions, so it may run on a read
// replica; it has no method that writes.
type Corpus struct{ *handle }

// corpusParams are the run-time parameters of the Corpus's connections.
// Search statements are prepared once and run with new values; a generic
// plan cannot see the query vector's LIMIT or the tsquery, and picks a
// sequential scan and a sort instead of the HNSW or GIN index.
func corpusParams() map[string]string {
	return map[string]string{"default_transaction_read_only": "on", "plan_cache_mode": "force_custom_plan"}
}

// NewCorpus returns the read handle on url without connecting: the first
// call connects and runs the start checks (the schema version, then
// WithCheck's), and later calls retry them until they pass. Only a URL that
// cannot be parsed fails here.
func NewCorpus(url string, opts ...Option) (*Corpus, error) {
	h, err := newHandle(url, corpusParams(), opts)
	if err != nil {
		return nil, err
	}
	return &Corpus{h}, nil
}

// OpenCorpus is NewCorpus, then a Ping: it fails when the database cannot
// be reached or a start check fails.
func OpenCorpus(ctx context.Context, url string, opts ...Option) (*Corpus, error) {
	c, err := NewCorpus(url, opts...)
	if err != nil {
		return nil, err
	}
	if err := c.Ping(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}
