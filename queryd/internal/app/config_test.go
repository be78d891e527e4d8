package app

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/internal/config/configtest"
	searchpkg "github.com/stratakb/stratakb/queryd/internal/search"
)

// base is the least environment queryd starts with. The database URL is
// only read here: no test in this file needs a database.
var base = map[string]string{"QUERYD_DATABASE_URL": "postgres://queryd:pw-db-secret@db.example/strata"}

func load(env map[string]string) (Config, error) {
	return LoadConfig(func(k string) string { return env[k] })
}

func TestConfigDefaults(t *testing.T) {
	c, err := load(base)
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	want.DatabaseURL = base["QUERYD_DATABASE_URL"]
	if c.String() != want.String() || c.Embed != embed.DefaultConfig() {
		t.Errorf("defaults:\n got %s\nwant %s", c, want)
	}
	if c.AnswerTokenBudget != 1500 || !c.Reranking.Enabled || c.Reranking.Model != RerankLocal || !c.LearningEnabled ||
		c.Server.RawQueries || c.Rewrite.Provider != RewriteNone || c.Rewrite.Timeout != 10*time.Second ||
		c.KeywordSlots != searchpkg.DefaultKeywordSlots || c.AllowOwner {
		t.Errorf("defaults: %s", c)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("the defaults do not validate: %v", err)
	}
}

// TestConfigVariables runs the shared good and bad values over every queryd
// variable of each kind.
func TestConfigVariables(t *testing.T) {
	configtest.Bools(t, base, load, map[string]func(Config) bool{
		"QUERYD_ALLOW_OWNER":         func(c Config) bool { return c.AllowOwner },
		"LEARNING_STORE_RAW_QUERIES": func(c Config) bool { return c.Server.RawQueries },
		"LEARNING_ENABLED":           func(c Config) bool { return c.LearningEnabled },
		"RERANKING_ENABLED":          func(c Config) bool { return c.Reranking.Enabled },
		"STRATA_LOCAL_ONLY":          func(c Config) bool { return c.Embed.LocalOnly },
		"EMBEDDING_QUERY_INT8":       func(c Config) bool { return c.Embed.QueryInt8 },
	})
	configtest.Durations(t, base, load, []configtest.Duration[Config]{
		configtest.D("QUERYD_REQUEST_TIMEOUT", 30*time.Second, func(c Config) time.Duration { return c.Server.RequestTimeout }),
		configtest.D("QUERYD_QUEUE_WAIT", 2*time.Second, func(c Config) time.Duration { return c.Server.QueueWait }),
		configtest.D("QUERYD_SHUTDOWN_TIMEOUT", 10*time.Second, func(c Config) time.Duration { return c.Server.ShutdownTimeout }),
		configtest.D("QUERYD_READ_TIMEOUT", 10*time.Second, func(c Config) time.Duration { return c.Server.ReadTimeout }),
		configtest.D("QUERY_REWRITE_TIMEOUT", 10*time.Second, func(c Config) time.Duration { return c.Rewrite.Timeout }),
		configtest.D("EMBEDDING_TIMEOUT", 60*time.Second, func(c Config) time.Duration { return c.Embed.Timeout }),
	})
	configtest.Ints(t, base, load, []configtest.Int[Config]{
		configtest.I("QUERYD_MAX_REQUEST_BYTES", 1<<20, map[string]int{"2048": 2048}, []string{"10", "-1", "999999999"},
			func(c Config) int { return int(c.Server.MaxRequestBytes) }),
		configtest.I("QUERYD_MAX_CONCURRENT_SEARCHES", 8, map[string]int{"3": 3, " 1 ": 1}, []string{"0", "5000"},
			func(c Config) int { return c.Server.MaxConcurrent }),
		configtest.I("QUERYD_MAX_CONNS_PER_CLIENT", 64, map[string]int{"0": 0, "7": 7}, []string{"-1"},
			func(c Config) int { return c.Server.MaxConnsPerClient }),
		configtest.I("HYBRID_KEYWORD_SLOTS", searchpkg.DefaultKeywordSlots, map[string]int{"0": 0, "3": 3}, []string{"-1", "51"},
			func(c Config) int { return c.KeywordSlots }),
		configtest.I("ANSWER_TOKEN_BUDGET", 1500, map[string]int{"200": 200, "4000": 4000, "20000": 20000}, []string{"0", "199", "20001"},
			func(c Config) int { return c.AnswerTokenBudget }),
		configtest.I("EMBEDDING_DIMENSIONS", 0, map[string]int{"256": 256}, []string{"-4", "100000"},
			func(c Config) int { return c.Embed.Dimensions }),
		configtest.I("EMBEDDING_BATCH_SIZE", embed.DefaultLocalBatchSize, map[string]int{"16": 16}, []string{"0", "513"},
			func(c Config) int { return c.Embed.BatchSize }),
		configtest.I("EMBEDDING_MAX_REQUEST_CHARS", embed.DefaultMaxRequestChars, map[string]int{"5000": 5000}, []string{"0"},
			func(c Config) int { return c.Embed.MaxRequestChars }),
		configtest.I("EMBEDDING_MAX_RETRIES", embed.DefaultMaxRetries, map[string]int{"0": 0, "3": 3}, []string{"-1", "21"},
			func(c Config) int { return c.Embed.MaxRetries }),
		configtest.I("EMBEDDING_THREADS", 0, map[string]int{"2": 2}, []string{"0", "257"},
			func(c Config) int { return c.Embed.IntraOpThreads }),
	})
	configtest.Enums(t, base, load, []configtest.Enum[Config]{
		{Name: "QUERY_REWRITE_PROVIDER", Def: RewriteNone,
			Good: map[string]string{"none": RewriteNone, "mcp_sampling": RewriteMCPSampling, "anthropic": RewriteAnthropic},
			Get:  func(c Config) string { return c.Rewrite.Provider },
			Env:  map[string]string{"ANTHROPIC_API_KEY": "sk-ant-test"}},
		{Name: "EMBEDDING_PROVIDER", Def: embed.ProviderLocal,
			Good: map[string]string{"local": embed.ProviderLocal, "openai_compatible": embed.ProviderOpenAI},
			Get:  func(c Config) string { return c.Embed.Provider },
			Env:  map[string]string{"EMBEDDING_BASE_URL": "http://127.0.0.1:11434/v1", "EMBEDDING_MODEL": "e5-small-v2"}},
		{Name: "LOG_LEVEL", Def: "INFO",
			Good: map[string]string{"debug": "DEBUG", "warn": "WARN", "error": "ERROR"},
			Get:  func(c Config) string { return c.LogLevel.String() }},
	})
}

func TestConfigStringsAndLists(t *testing.T) {
	c, err := load(configtest.With(base,
		"QUERYD_ADDR", " 127.0.0.1:9999 ", "QUERYD_ALLOWED_ORIGINS", "https://a.example, ,https://b.example/",
		"RERANKING_MODEL", " other-reranker ", "STRATA_MODEL_DIR", "/opt/m", "ONNXRUNTIME_LIB", "/opt/lib.so"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Server.Addr != "127.0.0.1:9999" || len(c.Server.AllowedOrigins) != 2 || c.Server.AllowedOrigins[1] != "https://b.example" ||
		c.Reranking.Model != "other-reranker" || c.Embed.ModelDir != "/opt/m" || c.Embed.LibraryPath != "/opt/lib.so" {
		t.Errorf("config %s origins %q", c, c.Server.AllowedOrigins)
	}
	for k, v := range map[string]string{
		"QUERYD_ADDR": "nonsense", "QUERYD_ALLOWED_ORIGINS": "*", "QUERYD_TOKENS": "owner:0123456789abcdef",
		"QUERYD_TOKEN_FILE": "/nonexistent/tokens",
	} {
		configtest.Refused(t, base, load, k, v)
	}
	if _, err := load(map[string]string{"STRATA_HOME": t.TempDir()}); !configtest.Names(err, "DATABASE_URL") {
		t.Errorf("no database URL: %v", err)
	}
}

// TestConfigRewrite: the query rewriter's provider, its defaults and what
// each provider needs.
func TestConfigRewrite(t *testing.T) {
	key := "sk-ant-test"
	c, err := load(configtest.With(base, "ANTHROPIC_API_KEY", key))
	if err != nil || c.Rewrite.Provider != RewriteAnthropic || c.Rewrite.Model != DefaultAnthropicModel {
		t.Errorf("ANTHROPIC_API_KEY set: %s, %v; want anthropic with %s", c, err, DefaultAnthropicModel)
	}
	c, err = load(configtest.With(base, "ANTHROPIC_API_KEY", key, "QUERY_REWRITE_MODEL", "claude-x"))
	if err != nil || c.Rewrite.Model != "claude-x" {
		t.Errorf("QUERY_REWRITE_MODEL not taken: %s, %v", c, err)
	}
	// Under STRATA_LOCAL_ONLY a key in the environment does not pick a
	// remote provider; naming it is refused.
	c, err = load(configtest.With(base, "ANTHROPIC_API_KEY", key, "STRATA_LOCAL_ONLY", "yes"))
	if err != nil || c.Rewrite.Provider != RewriteNone {
		t.Errorf("local only with a key: %s, %v; want none", c, err)
	}
	configtest.Refused(t, configtest.With(base, "ANTHROPIC_API_KEY", key, "STRATA_LOCAL_ONLY", "on"), load,
		"QUERY_REWRITE_PROVIDER", "anthropic", "STRATA_LOCAL_ONLY")
	if _, err := load(configtest.With(base, "QUERY_REWRITE_PROVIDER", "anthropic")); !configtest.Names(err, "ANTHROPIC_API_KEY") {
		t.Errorf("anthropic without a key: %v; want ANTHROPIC_API_KEY named", err)
	}

	oc := configtest.With(base, "QUERY_REWRITE_PROVIDER", "openai_compatible", "QUERY_REWRITE_MODEL", "llama3.2")
	for _, u := range []string{"http://127.0.0.1:11434/v1", "http://127.0.0.1:11434/v1/", "https://gw.example.com/openai/v1"} {
		c, err := load(configtest.With(oc, "QUERY_REWRITE_BASE_URL", u))
		if err != nil || c.Rewrite.BaseURL != u || c.Rewrite.Model != "llama3.2" {
			t.Errorf("QUERY_REWRITE_BASE_URL=%s: %s, %v", u, c, err)
		}
	}
	for _, u := range []string{"http://127.0.0.1:11434", "http://127.0.0.1:11434/v1/chat/completions", "ftp://h/v1", "127.0.0.1:11434/v1", "http:///v1", "unix:///run/x.sock"} {
		configtest.Refused(t, oc, load, "QUERY_REWRITE_BASE_URL", u)
	}
	// openai_compatible with nothing else: every missing setting is named.
	_, err = load(configtest.With(base, "QUERY_REWRITE_PROVIDER", "openai_compatible"))
	for _, name := range []string{"QUERY_REWRITE_BASE_URL", "QUERY_REWRITE_MODEL"} {
		if !configtest.Names(err, name) {
			t.Errorf("openai_compatible alone: %v; want %s named", err, name)
		}
	}
	local := configtest.With(oc, "STRATA_LOCAL_ONLY", "1")
	for u, ok := range map[string]bool{
		"http://127.0.0.1:11434/v1": true, "http://[::1]:8080/v1": true, "http://localhost:11434/v1": true,
		"http://203.0.113.5/v1": false, "https://10.0.0.2/v1": false,
	} {
		if ok {
			if _, err := load(configtest.With(local, "QUERY_REWRITE_BASE_URL", u)); err != nil {
				t.Errorf("local only refused %s: %v", u, err)
			}
		} else {
			configtest.Refused(t, local, load, "QUERY_REWRITE_BASE_URL", u, "STRATA_LOCAL_ONLY")
		}
	}
}

// TestConfigReportsEveryProblem: one run names every bad variable.
func TestConfigReportsEveryProblem(t *testing.T) {
	bad := map[string]string{
		"QUERYD_ALLOW_OWNER": "maybe", "QUERYD_REQUEST_TIMEOUT": "soon", "ANSWER_TOKEN_BUDGET": "5",
		"EMBEDDING_TIMEOUT": "later", "HYBRID_KEYWORD_SLOTS": "x", "RERANKING_ENABLED": "2", "QUERY_REWRITE_PROVIDER": "cohere",
	}
	_, err := load(configtest.With(base, flatten(bad)...))
	for name := range bad {
		if !configtest.Names(err, name) {
			t.Errorf("error %v\ndoes not name %s", err, name)
		}
	}
	// And Validate on a configuration built in code.
	c := DefaultConfig()
	c.AnswerTokenBudget, c.KeywordSlots, c.Reranking.Model = 0, -1, " "
	c.Rewrite.Provider, c.Rewrite.Timeout = RewriteOpenAI, 0
	err = c.Validate()
	for _, name := range []string{"QUERYD_DATABASE_URL", "ANSWER_TOKEN_BUDGET", "HYBRID_KEYWORD_SLOTS", "RERANKING_MODEL", "QUERY_REWRITE_TIMEOUT", "QUERY_REWRITE_BASE_URL", "QUERY_REWRITE_MODEL"} {
		if !configtest.Names(err, name) {
			t.Errorf("Validate() = %v\ndoes not name %s", err, name)
		}
	}
}

// TestConfigNeverShowsSecrets: keys and the database password show in no
// format and no log line.
func TestConfigNeverShowsSecrets(t *testing.T) {
	const ant, rw, emb = "sk-ant-SECRET1", "rw-SECRET2", "emb-SECRET3"
	c, err := load(configtest.With(base, "ANTHROPIC_API_KEY", ant, "QUERY_REWRITE_API_KEY", rw,
		"EMBEDDING_API_KEY", emb, "QUERY_REWRITE_BASE_URL", "https://u:pw-SECRET4@gw.example.com/v1?key=SECRET5"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("config", "config", c)
	slog.New(slog.NewTextHandler(&buf, nil)).Info("config", "config", c)
	shown := buf.String() + fmt.Sprintf("%v %+v %#v %s", c, c, c, c)
	for _, s := range []string{"SECRET", "pw-db-secret"} {
		if strings.Contains(shown, s) {
			t.Fatalf("%s shows:\n%s", s, shown)
		}
	}
	if !strings.Contains(buf.String(), `"anthropic_api_key":"set"`) || !strings.Contains(c.String(), "rewrite_api_key=set") ||
		!strings.Contains(c.String(), "db.example") {
		t.Errorf("the description lost its content:\n%s\n%s", buf.String(), c)
	}
	c.DatabaseURL = "host=db password=pw-db-secret"
	if strings.Contains(c.String(), "pw-db-secret") {
		t.Errorf("a key=value DSN's password shows: %s", c)
	}
}

func flatten(m map[string]string) []string {
	var kv []string
	for k, v := range m {
		kv = append(kv, k, v)
	}
	return kv
}
