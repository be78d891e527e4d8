package app

import (
	"context"
	"testing"

	"github.com/stratakb/stratakb/queryd/internal/caller"
)

// TestProvidersFromConfig: every rewrite provider the configuration accepts
// builds (none and mcp_sampling without a network), and mcp_sampling
// without a sampling client searches the question as written.
func TestProvidersFromConfig(t *testing.T) {
	for _, env := range []map[string]string{
		{},
		{"QUERY_REWRITE_PROVIDER": "none"},
		{"QUERY_REWRITE_PROVIDER": "mcp_sampling"},
		{"QUERY_REWRITE_PROVIDER": "openai_compatible", "QUERY_REWRITE_BASE_URL": "http://127.0.0.1:11434/v1", "QUERY_REWRITE_MODEL": "llama3.2"},
		{"ANTHROPIC_API_KEY": "sk-ant-test-000000000000"},
		{"RERANKING_PROVIDER": "http", "RERANKING_BASE_URL": "http://127.0.0.1:8080"},
		{"RERANKING_ENABLED": "false"},
	} {
		env["QUERYD_DATABASE_URL"] = "postgres://queryd@127.0.0.1:1/x"
		cfg, err := LoadConfig(func(k string) string { return env[k] })
		if err != nil {
			t.Errorf("%v: %v", env, err)
			continue
		}
		rw, err := newRewriter(cfg, nil)
		if err != nil {
			t.Errorf("%v: rewriter: %v", env, err)
		}
		rr, why, err := newReranker(cfg, nil, nil)
		if err != nil || rr == nil && why == "" {
			t.Errorf("%v: reranker %v, reason %q, %v", env, rr, why, err)
		}
		if env["QUERY_REWRITE_PROVIDER"] == "mcp_sampling" {
			vs, kind := rw(context.Background(), "What is AC04?", nil)
			if len(vs) != 1 || vs[0] != "What is AC04?" || kind != "" {
				t.Errorf("mcp_sampling without a sampler: %q %q", vs, kind)
			}
			sampled := caller.WithSampler(context.Background(), func(context.Context, string, string, int) (string, error) {
				return `["reason code AC04 closed account"]`, nil
			})
			if vs, _ := rw(sampled, "What is AC04?", nil); len(vs) != 2 {
				t.Errorf("mcp_sampling with a sampler: %q", vs)
			}
		}
		if (env["QUERY_REWRITE_PROVIDER"] == "" && env["ANTHROPIC_API_KEY"] == "" || env["QUERY_REWRITE_PROVIDER"] == "none") && rw != nil {
			t.Errorf("%v: a rewriter without a provider", env)
		}
	}
}
