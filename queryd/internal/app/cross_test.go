package app

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/internal/testenv"
	askpkg "github.com/stratakb/stratakb/queryd/internal/ask"
	"github.com/stratakb/stratakb/queryd/internal/retrieve"
)

// TestONNXCrossEncoderReranks: RERANKING_PROVIDER=onnx with a folder holding
// a sequence-classification export gives strata_ask a reranker whose scores
// are the model's probabilities, and the same model scores extractive
// sentences. The model is the tiny generated cross-encoder of embed/bert;
// a folder without model.onnx is refused at start-up.
func TestONNXCrossEncoderReranks(t *testing.T) {
	root := testenv.RepoRoot(t)
	lib := filepath.Join(testenv.VarDir(t), "lib", "libonnxruntime.so.1")
	testenv.Require(t, lib, "ONNX Runtime (make setup)")
	dir := filepath.Join(root, "embed", "bert", "testdata", "tiny-cross-encoder")
	env := map[string]string{"QUERYD_DATABASE_URL": "postgres://queryd@127.0.0.1:1/x", "ONNXRUNTIME_LIB": lib,
		"RERANKING_PROVIDER": "onnx", "RERANKING_MODEL": dir}
	cfg, err := LoadConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	cross := newCrossEncoder(cfg)
	defer cross.Close()
	rr, why, err := newReranker(cfg, nil, cross)
	if err != nil || rr == nil {
		t.Fatalf("reranker %v (%q), %v", rr, why, err)
	}
	if rr.Name() != "cross-encoder:tiny-cross-encoder" {
		t.Errorf("name %q", rr.Name())
	}
	cands := []retrieve.Candidate{{Text: "the pump station is inspected every spring"}, {Text: "valves are replaced when worn"}}
	got, err := rr.Rerank(context.Background(), "when is the pump station inspected", cands)
	if err != nil || len(got) != 2 {
		t.Fatalf("Rerank = %v, %v", got, err)
	}
	direct, err := cross.m.Score(context.Background(), "when is the pump station inspected", []string{cands[0].Text, cands[1].Text})
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if got[i] <= 0 || got[i] >= 1 || got[i] != direct[i] {
			t.Errorf("score %d = %v, want the model's probability %v", i, got[i], direct[i])
		}
	}
	if got[0] == got[1] {
		t.Errorf("two different passages scored the same %v: the model's output is not reaching the reranker", got)
	}
	sents, err := newSentenceScorer(cfg, nil, nil, cross)
	if _, ok := sents.(askpkg.TextSentences); err != nil || !ok {
		t.Errorf("sentence scorer %T, %v; want the cross-encoder's", sents, err)
	}

	env["RERANKING_MODEL"] = t.TempDir()
	if _, err := LoadConfig(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "model.onnx") {
		t.Errorf("a folder without model.onnx: %v, want a start-up error naming model.onnx", err)
	}
}
