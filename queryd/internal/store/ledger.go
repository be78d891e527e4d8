package store

import (
	"context"
	"encoding/json"
	"fmt"
)

// Ledger writes what queryd records about its own work: interactions now,
// feedback and receipts later. It connects to the primary with ordinary
// read-write transactions; the queryd role may insert into the ledger tables
// and read them, and nothing else (schema/migrations/0011_interactions.sql).
type Ledger struct {
	*handle
	receiptKey *ReceiptKey // nil: receipts are issued unsigned
}

// LedgerTables are the tables queryd may insert into, in the strata schema.
// queryd's start-up role check accepts INSERT on these and on no other.
func LedgerTables() []string { return []string{"feedback", "interactions", "receipts"} }

// NewLedger returns the write handle on url without connecting: like
// NewCorpus, the first call connects and runs the start checks.
func NewLedger(url string, opts ...Option) (*Ledger, error) {
	h, err := newHandle(url, nil, opts)
	if err != nil {
		return nil, err
	}
	o := openOptions{}
	for _, fn := range opts {
		fn(&o)
	}
	return &Ledger{handle: h, receiptKey: o.receiptKey}, nil
}

// OpenLedger is NewLedger, then a Ping.
func OpenLedger(ctx context.Context, url string, opts ...Option) (*Ledger, error) {
	l, err := NewLedger(url, opts...)
	if err != nil {
		return nil, err
	}
	if err := l.Ping(ctx); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// Interaction is one tool call queryd records.
type Interaction struct {
	Caller   string   // who asked: the role or client name, "" when unknown
	Tool     string   // the tool, as strata_search
	Question string   // the question as recorded (scrubbed by the caller)
	Layers   []string // the layers searched
	Status   string   // how it ended, as ok or unavailable
	// Detail is a JSON object of whatever else the tool keeps; nil is {}.
	Detail json.RawMessage
}

// RecordInteraction stores in and returns its id.
func (l *Ledger) RecordInteraction(ctx context.Context, in Interaction) (int64, error) {
	if in.Tool == "" || in.Status == "" {
		return 0, fmt.Errorf("record interaction: tool and status are required")
	}
	layers := in.Layers
	if layers == nil {
		layers = []string{}
	}
	detail := in.Detail
	if len(detail) == 0 {
		detail = json.RawMessage(`{}`)
	}
	var id int64
	err := l.db.QueryRow(ctx, `INSERT INTO strata.interactions (caller, tool, question, layers, status, detail)
		VALUES ($1, $2, $3, $4, $5, $6::jsonb) RETURNING id`,
		in.Caller, in.Tool, in.Question, layers, in.Status, string(detail)).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("record interaction: %w", err)
	}
	return id, nil
}
