package embedding

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/internal/testenv"
)

// realConfig is the default model's configuration under var/, skipping
// (failing under CI) when it or its int8 export is not there.
func realConfig(t *testing.T) embed.Config {
	t.Helper()
	v := testenv.VarDir(t)
	cfg := embed.DefaultConfig()
	cfg.ModelDir = filepath.Join(v, "models", embed.DefaultLocalModel)
	cfg.LibraryPath = filepath.Join(v, "lib", "libonnxruntime.so.1")
	export, ok := embed.QueryExport(embed.DefaultLocalModel)
	if !ok {
		t.Fatalf("the default model %s has no int8 query export", embed.DefaultLocalModel)
	}
	testenv.Require(t, filepath.Join(cfg.ModelDir, "model.onnx"), "the default model (make setup)")
	testenv.Require(t, filepath.Join(v, "models", export, "model.onnx"), "its int8 export (make setup)")
	testenv.Require(t, cfg.LibraryPath, "ONNX Runtime (make setup)")
	cfg.QueryInt8 = true
	return cfg
}

func cosine(a, b []float32) float64 {
	var d float64
	for i := range a {
		d += float64(a[i] * b[i])
	}
	return d
}

// TestForQueriesUsesTheInt8Export: queries go through the export, under the
// model's own vector name and width; passages through the model itself;
// the two query vectors agree to a cosine of 0.99 (EMBEDDING_QUERY_INT8=true).
func TestForQueriesUsesTheInt8Export(t *testing.T) {
	cfg := realConfig(t)
	full, err := Load(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := ForQueries(cfg, nil, full)
	t.Cleanup(func() { _ = embed.Close(e) })
	x, ok := e.(*QueryExport)
	if !ok {
		t.Fatalf("ForQueries returned %T, want *QueryExport", e)
	}
	if want, _ := embed.QueryExport(embed.DefaultLocalModel); x.QueryEncoder() != want {
		t.Errorf("QueryEncoder %q, want %q", x.QueryEncoder(), want)
	}
	if e.Model() != full.Model() {
		t.Errorf("model %+v, want the full model's %+v", e.Model(), full.Model())
	}
	if st, _ := x.State(); st != embed.NotLoaded {
		t.Errorf("export state %v before any query, want not loaded", st)
	}
	ctx := context.Background()
	qs := []string{"How many unused leave days can be carried over to next year?", "reason code AC04"}
	got, err := e.Embed(ctx, qs)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := full.Embed(ctx, qs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range qs {
		if len(got[i]) != full.Model().Dims {
			t.Fatalf("query %d: %d dimensions, want %d", i, len(got[i]), full.Model().Dims)
		}
		c := cosine(got[i], ref[i])
		if c < 0.99 || c > 0.99999 {
			t.Errorf("query %d: cosine with the full model's vector %.5f, want in [0.99, 0.99999) (the export, not the model itself)", i, c)
		}
	}
	if st, _ := x.State(); st != embed.Loaded {
		t.Errorf("export state %v after a query, want loaded", st)
	}
	ps := []string{"Unused leave days may be carried over, up to five."}
	pv, err := x.EmbedPassages(ctx, ps)
	if err != nil {
		t.Fatal(err)
	}
	pref, err := full.(interface {
		EmbedPassages(context.Context, []string) ([][]float32, error)
	}).EmbedPassages(ctx, ps)
	if err != nil {
		t.Fatal(err)
	}
	if c := cosine(pv[0], pref[0]); c < 0.99999 {
		t.Errorf("passage cosine with the full model %.6f: passages must be embedded by the model itself", c)
	}
}

// TestForQueriesKeepsTheModel: switched off, with no export for the model,
// or with the export's folder missing (logged), queries stay with the
// model itself.
func TestForQueriesKeepsTheModel(t *testing.T) {
	cfg := realConfig(t)
	full, err := Load(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = embed.Close(full) })
	off := cfg
	off.QueryInt8 = false
	if _, ok := ForQueries(off, nil, full).(*QueryExport); ok {
		t.Errorf("EMBEDDING_QUERY_INT8 unset: got the export, want the model itself")
	}
	lite := cfg
	lite.ModelName, lite.ModelDir = embed.USELiteModel, filepath.Join(t.TempDir(), "use-lite")
	if _, ok := ForQueries(lite, nil, full).(*QueryExport); ok {
		t.Errorf("a model without an export: got its export")
	}
	// The model's folder alone, no export beside it.
	alone := filepath.Join(t.TempDir(), embed.DefaultLocalModel)
	if err := os.Symlink(cfg.ModelDir, alone); err != nil {
		t.Fatal(err)
	}
	missing := cfg
	missing.ModelDir = alone
	var log bytes.Buffer
	if _, ok := ForQueries(missing, slog.New(slog.NewTextHandler(&log, nil)), full).(*QueryExport); ok {
		t.Errorf("export folder missing: got the export, want the model itself")
	}
	if !strings.Contains(log.String(), "int8 export for queries is not there") {
		t.Errorf("export folder missing: log %q, want a warning", log.String())
	}
}
