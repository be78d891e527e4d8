// Package ingesttest ingests folders into a test database the way ingestd
// does (River workers, the standard pipeline, optionally a real embedding
// model), so query-side tests run against real stored documents.
package ingesttest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stratakb/stratakb/jobs"
	"github.com/stratakb/stratakb/parsers"
	"github.com/stratakb/stratakb/schema"
)

// Options for Ingest.
type Options struct {
	// Vectorizer embeds the chunks; nil leaves vectors pending.
	Vectorizer jobs.Vectorizer
	// OCR turns on OCR of scanned pages (slow); off by default in tests.
	OCR bool
	// Timeout bounds the whole ingest (default 5 minutes).
	Timeout time.Duration
}

// Migrate applies every migration to the pool's database.
func Migrate(t testing.TB, pool *pgxpool.Pool) {
	t.Helper()
	if err := jobs.Migrate(context.Background(), pool); err != nil {
		t.Fatalf("ingesttest: migrate: %v", err)
	}
}

// Ingest registers the layer (Root must be an absolute folder), ingests it,
// embeds its chunks when opt.Vectorizer is set, and returns the run's
// progress. It fails the test when the run does not finish in time.
func Ingest(t testing.TB, pool *pgxpool.Pool, layer jobs.Layer, opt Options) jobs.RunProgress {
	t.Helper()
	if opt.Timeout == 0 {
		opt.Timeout = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), opt.Timeout)
	defer cancel()
	Migrate(t, pool)
	if layer.AnswerMode == "" {
		layer.AnswerMode = schema.DefaultAnswerMode
	}
	if layer.ChunkSize == 0 {
		layer.ChunkSize = schema.DefaultChunkSize
	}
	l, err := jobs.UpsertLayer(ctx, pool, layer)
	if err != nil {
		t.Fatalf("ingesttest: %v", err)
	}
	cc := jobs.ClientConfig{Workers: 2, Pipeline: jobs.StandardPipeline(parsers.Options{NoOCR: !opt.OCR}),
		Vectorizer: opt.Vectorizer}
	client, err := jobs.NewClient(pool, cc)
	if err != nil {
		t.Fatalf("ingesttest: %v", err)
	}
	if err := client.Start(ctx); err != nil {
		t.Fatalf("ingesttest: start workers: %v", err)
	}
	defer func() {
		sctx, scancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer scancel()
		_ = client.Stop(sctx)
	}()
	runID, err := jobs.StartIngest(ctx, pool, client, l.ID, "test")
	if err != nil {
		t.Fatalf("ingesttest: %v", err)
	}
	var p jobs.RunProgress
	for {
		if p, err = jobs.Progress(ctx, pool, runID); err != nil {
			t.Fatalf("ingesttest: %v", err)
		}
		if p.Done() {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("ingesttest: layer %s not ingested within %s: %+v", l.Name, opt.Timeout, p)
		case <-time.After(100 * time.Millisecond):
		}
	}
	if opt.Vectorizer == nil {
		return p
	}
	model := opt.Vectorizer.Model().Name
	if _, err := client.Insert(ctx, jobs.EmbedArgs{LayerID: l.ID, Model: model}, nil); err != nil {
		t.Fatalf("ingesttest: enqueue embedding: %v", err)
	}
	for {
		pending, err := jobs.PendingVectors(ctx, pool, model)
		if err != nil {
			t.Fatalf("ingesttest: %v", err)
		}
		active, err := jobs.ActiveEmbedJobs(ctx, client, pool, l.ID)
		if err != nil {
			t.Fatalf("ingesttest: %v", err)
		}
		if pending[l.ID] == 0 && active == 0 {
			return p
		}
		if active == 0 {
			// The job may have finished between the two reads: what it
			// left is only known after it stopped.
			if pending, err = jobs.PendingVectors(ctx, pool, model); err != nil {
				t.Fatalf("ingesttest: %v", err)
			}
			if pending[l.ID] == 0 {
				return p
			}
			t.Fatalf("ingesttest: %d chunks of %s left without vectors and no embed job running", pending[l.ID], l.Name)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("ingesttest: layer %s not embedded within %s", l.Name, opt.Timeout)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
