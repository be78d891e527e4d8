package app

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/internal/embedding"
	"github.com/stratakb/stratakb/internal/testenv"
	"github.com/stratakb/stratakb/queryd/internal/server"
)

// TestQueryEmbedderLoadsOnFirstUse: the model is not loaded until a vector
// is needed; /healthz's model state goes from "not loaded yet" to the load's
// outcome, and a failed load is reported, with its reason, only when it
// happens.
func TestQueryEmbedderLoadsOnFirstUse(t *testing.T) {
	var logs bytes.Buffer
	cfg := embed.DefaultConfig()
	cfg.ModelDir = filepath.Join(t.TempDir(), "no-model")
	q := newQueryEmbedder(cfg, slog.New(slog.NewTextHandler(&logs, nil)))
	defer q.close()
	if name, err := q.ModelHealth(context.Background()); name != "bge-small-en-v1.5@1" || !errors.Is(err, server.ErrModelNotLoaded) {
		t.Fatalf("before any query: %q, %v; want the model's name and not loaded yet", name, err)
	}
	if logs.Len() > 0 {
		t.Fatalf("a model nobody needed was loaded:\n%s", logs.String())
	}
	if _, err := q.emb.Embed(context.Background(), []string{"a query"}); !errors.Is(err, embed.ErrLoad) {
		t.Fatalf("embedding without the model files gave %v", err)
	}
	_, err := q.ModelHealth(context.Background())
	if err == nil || errors.Is(err, server.ErrModelNotLoaded) || !strings.Contains(err.Error(), "no-model") {
		t.Fatalf("after a failed load /healthz gets %v, want the load error", err)
	}
	if !strings.Contains(logs.String(), "embedding model unavailable") {
		t.Errorf("the failed load was not logged:\n%s", logs.String())
	}
}

// TestQueryEmbedderWarm: serve starts the load in the background, and the
// model reports healthy once it is loaded.
func TestQueryEmbedderWarm(t *testing.T) {
	cfg := embed.DefaultConfig()
	cfg.ModelDir = filepath.Join(testenv.VarDir(t), "models", "use-lite")
	cfg.LibraryPath = filepath.Join(testenv.VarDir(t), "lib", "libonnxruntime.so.1")
	testenv.Require(t, filepath.Join(cfg.ModelDir, "model.json"), "the local model (make setup)")
	q := newQueryEmbedder(cfg, slog.New(slog.DiscardHandler))
	defer q.close()
	q.warm()
	waitModelLoaded(t, q)
}

// waitModelLoaded waits up to a minute for q's model to report loaded.
func waitModelLoaded(t *testing.T, q *queryEmbedder) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := q.ModelHealth(context.Background())
		if err == nil {
			return
		}
		if !errors.Is(err, server.ErrModelNotLoaded) || time.Now().After(deadline) {
			t.Fatalf("model after warm: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestQueryEmbedderThreads: queryd runs the local model with one thread per
// query unless EMBEDDING_THREADS says otherwise.
func TestQueryEmbedderThreads(t *testing.T) {
	for env, want := range map[string]int{"": queryThreads, "3": 3} {
		cfg, err := embed.ConfigFromEnv(func(k string) string {
			if k == "EMBEDDING_THREADS" {
				return env
			}
			return ""
		})
		if err != nil {
			t.Fatal(err)
		}
		q := newQueryEmbedder(cfg, slog.New(slog.DiscardHandler))
		if q.threads != want {
			t.Errorf("EMBEDDING_THREADS=%q: %d threads, want %d", env, q.threads, want)
		}
		q.close()
	}
}

// TestQueryEmbedderInt8Export: with EMBEDDING_QUERY_INT8=true queries go
// through the default model's int8 export, loaded in the background by
// warm; /healthz waits for it, and the vectors keep the model's name.
func TestQueryEmbedderInt8Export(t *testing.T) {
	v := testenv.VarDir(t)
	cfg := embed.DefaultConfig()
	cfg.LibraryPath = filepath.Join(v, "lib", "libonnxruntime.so.1")
	cfg.ModelDir = filepath.Join(v, "models", embed.DefaultLocalModel)
	export, _ := embed.QueryExport(embed.DefaultLocalModel)
	testenv.Require(t, filepath.Join(v, "models", export, "model.onnx"), "the int8 export (make setup)")
	cfg.QueryInt8 = true
	q := newQueryEmbedder(cfg, slog.New(slog.DiscardHandler))
	defer q.close()
	x, ok := q.emb.(*embedding.QueryExport)
	if !ok || x.QueryEncoder() != export {
		t.Fatalf("query embedder %T, want the export %s", q.emb, export)
	}
	if name, err := q.ModelHealth(context.Background()); name != "bge-small-en-v1.5@1" || !errors.Is(err, server.ErrModelNotLoaded) {
		t.Fatalf("before warm: %q, %v; want the model's name, not loaded yet", name, err)
	}
	q.warm()
	waitModelLoaded(t, q)
	vs, err := q.emb.Embed(context.Background(), []string{"a query"})
	if err != nil || len(vs) != 1 || len(vs[0]) != q.emb.Model().Dims {
		t.Fatalf("embed: %v, %d vectors", err, len(vs))
	}
}
