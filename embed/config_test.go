package embed

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stratakb/stratakb/internal/config/configtest"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestConfigDefaultsToLocalModel(t *testing.T) {
	c, err := ConfigFromEnv(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c != DefaultConfig() {
		t.Fatalf("config with no variables = %+v, want DefaultConfig()", c)
	}
	if c.Provider != ProviderLocal || c.BatchSize != 32 || c.ModelDir != "" || c.LibraryPath != "var/lib/libonnxruntime.so.1" || c.LocalOnly {
		t.Errorf("defaults = %s", c)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("default config does not validate: %v", err)
	}
	if name, dir := c.LocalModel(); name != DefaultLocalModel || dir != "var/models/"+DefaultLocalModel {
		t.Errorf("LocalModel() = %q, %q; want the default model under var/models", name, dir)
	}
}

func TestConfigLocalModelChoice(t *testing.T) {
	for _, tc := range []struct {
		env       map[string]string
		name, dir string
		bad       string
	}{
		{env: map[string]string{"EMBEDDING_MODEL": "use-lite"}, name: "use-lite", dir: "var/models/use-lite"},
		{env: map[string]string{"EMBEDDING_MODEL": "e5-small-v2-q"}, name: "e5-small-v2-q", dir: "var/models/e5-small-v2-q"},
		{env: map[string]string{"STRATA_MODEL_DIR": "/opt/my-model"}, name: "", dir: "/opt/my-model"},
		{env: map[string]string{"EMBEDDING_MODEL": "mine", "STRATA_MODEL_DIR": "/opt/m"}, name: "mine", dir: "/opt/m"},
		{env: map[string]string{"EMBEDDING_MODEL": "bge-large"}, bad: `EMBEDDING_MODEL: "bge-large" is not a local model`},
	} {
		c, err := ConfigFromEnv(env(tc.env))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(); tc.bad != "" {
			if err == nil || !strings.Contains(err.Error(), tc.bad) || !strings.Contains(err.Error(), DefaultLocalModel) {
				t.Errorf("%v: Validate = %v, want %q and the known names", tc.env, err, tc.bad)
			}
			continue
		} else if err != nil {
			t.Errorf("%v: Validate: %v", tc.env, err)
		}
		if name, dir := c.LocalModel(); name != tc.name || dir != tc.dir {
			t.Errorf("%v: LocalModel() = %q, %q; want %q, %q", tc.env, name, dir, tc.name, tc.dir)
		}
	}
}

func TestCatalogRows(t *testing.T) {
	if _, ok := catalog[DefaultLocalModel]; !ok {
		t.Fatalf("the default model %s is not in models.tsv", DefaultLocalModel)
	}
	for _, e := range Catalog() {
		if len(e.SHA256) != 64 || strings.Count(e.Maven, ":") != 2 || e.Licence == "" || !strings.HasSuffix(e.ONNX, ".onnx") {
			t.Errorf("models.tsv row %+v: want a 64-hex SHA-256, group:artifact:version, a licence and an .onnx entry", e)
		}
	}
}

func TestConfigFromEnvRemote(t *testing.T) {
	c, err := ConfigFromEnv(env(map[string]string{
		"EMBEDDING_PROVIDER":    "OpenAI_Compatible",
		"EMBEDDING_BASE_URL":    "http://localhost:11434/v1",
		"EMBEDDING_MODEL":       "nomic-embed-text",
		"EMBEDDING_API_KEY":     " " + testKey + "\n",
		"EMBEDDING_DIMENSIONS":  "256",
		"EMBEDDING_MAX_RETRIES": "3",
		"EMBEDDING_TIMEOUT":     "45",
		"STRATA_LOCAL_ONLY":     "true",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Provider: ProviderOpenAI, BaseURL: "http://localhost:11434/v1", ModelName: "nomic-embed-text", APIKey: testKey,
		Dimensions: 256, BatchSize: 64, MaxRequestChars: DefaultMaxRequestChars, MaxRetries: 3, Timeout: 45 * time.Second,
		LocalOnly: true, LibraryPath: DefaultLibraryPath,
	}
	if c != want {
		t.Fatalf("config = %+v\nwant     %+v", c, want)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}

	c, err = ConfigFromEnv(env(map[string]string{
		"EMBEDDING_PROVIDER": "openai_compatible", "EMBEDDING_BATCH_SIZE": "16", "EMBEDDING_TIMEOUT": "2m",
		"STRATA_MODEL_DIR": "/opt/models/use", "ONNXRUNTIME_LIB": "/usr/lib/libonnxruntime.so.1", "EMBEDDING_MAX_REQUEST_CHARS": "5000",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.BatchSize != 16 || c.Timeout != 2*time.Minute || c.ModelDir != "/opt/models/use" || c.LibraryPath != "/usr/lib/libonnxruntime.so.1" || c.MaxRequestChars != 5000 {
		t.Errorf("explicit values not taken: %+v", c)
	}
}

func TestConfigErrorsNameTheVariable(t *testing.T) {
	remote := map[string]string{
		"EMBEDDING_PROVIDER": "openai_compatible",
		"EMBEDDING_BASE_URL": "http://127.0.0.1:8080/v1",
		"EMBEDDING_MODEL":    "m",
	}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range remote {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"EMBEDDING_PROVIDER": "cohere"}, "EMBEDDING_PROVIDER"},
		{map[string]string{"EMBEDDING_BATCH_SIZE": "lots"}, "EMBEDDING_BATCH_SIZE"},
		{map[string]string{"EMBEDDING_BATCH_SIZE": "0"}, "EMBEDDING_BATCH_SIZE"},
		{map[string]string{"EMBEDDING_BATCH_SIZE": "100000"}, "EMBEDDING_BATCH_SIZE"},
		{map[string]string{"STRATA_LOCAL_ONLY": "maybe"}, "STRATA_LOCAL_ONLY"},
		{map[string]string{"EMBEDDING_DIMENSIONS": "-4"}, "EMBEDDING_DIMENSIONS"},
		{map[string]string{"EMBEDDING_DIMENSIONS": "1.5"}, "EMBEDDING_DIMENSIONS"},
		{with("EMBEDDING_BASE_URL", ""), "EMBEDDING_BASE_URL"},
		{with("EMBEDDING_MODEL", ""), "EMBEDDING_MODEL"},
		{with("EMBEDDING_BASE_URL", "ftp://host/v1"), "EMBEDDING_BASE_URL"},
		{with("EMBEDDING_BASE_URL", "localhost:11434"), "EMBEDDING_BASE_URL"},
		{with("EMBEDDING_BASE_URL", "unix://relative.sock"), "EMBEDDING_BASE_URL"},
		{with("EMBEDDING_MAX_RETRIES", "-1"), "EMBEDDING_MAX_RETRIES"},
		{with("EMBEDDING_MAX_RETRIES", "99"), "EMBEDDING_MAX_RETRIES"},
		{with("EMBEDDING_TIMEOUT", "forever"), "EMBEDDING_TIMEOUT"},
		{with("EMBEDDING_TIMEOUT", "10ms"), "EMBEDDING_TIMEOUT"},
		{with("EMBEDDING_MAX_REQUEST_CHARS", "0"), "EMBEDDING_MAX_REQUEST_CHARS"},
		{with("EMBEDDING_BATCH_SIZE", "4096"), "EMBEDDING_BATCH_SIZE"},
		{map[string]string{"STRATA_MODEL_DIR": " "}, ""}, // blank counts as unset: valid
		{map[string]string{"EMBEDDING_THREADS": "two"}, "EMBEDDING_THREADS"},
		{map[string]string{"EMBEDDING_THREADS": "-1"}, "EMBEDDING_THREADS"},
		{map[string]string{"EMBEDDING_THREADS": "1000"}, "EMBEDDING_THREADS"},
		{map[string]string{"EMBEDDING_THREADS": "1"}, ""},
	} {
		c, err := ConfigFromEnv(env(tc.env))
		if err == nil {
			err = c.Validate()
		}
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("env %v: unexpected error %v", tc.env, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("env %v: error %v does not name %s", tc.env, err, tc.want)
		}
	}
}

func TestConfigReportsEveryProblem(t *testing.T) {
	c := DefaultConfig()
	c.Provider = ProviderOpenAI
	c.MaxRetries = -1
	err := c.Validate()
	for _, name := range []string{"EMBEDDING_BASE_URL", "EMBEDDING_MODEL", "EMBEDDING_MAX_RETRIES"} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("Validate() = %v, want it to name %s too", err, name)
		}
	}
}

func TestEndpointURL(t *testing.T) {
	for base, want := range map[string]string{
		"http://localhost:11434/v1":           "http://localhost:11434/v1/embeddings",
		"http://localhost:11434/v1/":          "http://localhost:11434/v1/embeddings",
		"http://localhost:11434":              "http://localhost:11434/v1/embeddings",
		"http://localhost:11434/":             "http://localhost:11434/v1/embeddings",
		"https://api.openai.com/v1":           "https://api.openai.com/v1/embeddings",
		"https://gw.example.com/openai":       "https://gw.example.com/openai/embeddings",
		"http://127.0.0.1:8080/v1/embeddings": "http://127.0.0.1:8080/v1/embeddings",
		"https://user:secret@host/v1":         "https://user:xxxxx@host/v1/embeddings",
		"https://host/v1?api-key=secret":      "https://host/v1/embeddings?...",
		"unix:///run/tei.sock":                "unix:///run/tei.sock/v1/embeddings",
	} {
		got, err := Config{BaseURL: base}.EndpointURL()
		if err != nil || got != want {
			t.Errorf("EndpointURL(%s) = %q, %v; want %q", base, got, err, want)
		}
	}
	ep, err := parseEndpoint("https://host/v1?api-key=secret")
	if err != nil || ep.url.String() != "https://host/v1/embeddings?api-key=secret" {
		t.Errorf("the query string must still reach the endpoint: %v, %v", ep.url, err)
	}
}

// fakeLookup resolves names from a table instead of DNS.
func fakeLookup(t *testing.T, table map[string][]string) {
	t.Helper()
	prev := lookupIPAddr
	lookupIPAddr = func(_ context.Context, host string) ([]net.IPAddr, error) {
		ips, ok := table[host]
		if !ok {
			return nil, fmt.Errorf("lookup %s: no such host", host)
		}
		var out []net.IPAddr
		for _, s := range ips {
			out = append(out, net.IPAddr{IP: net.ParseIP(s)})
		}
		return out, nil
	}
	t.Cleanup(func() { lookupIPAddr = prev })
}

func TestLocalOnlyRefusesRemoteProviders(t *testing.T) {
	fakeLookup(t, map[string][]string{
		"api.openai.com": {"162.159.140.245"},
		"embed.internal": {"10.1.2.3"},
		"split.example":  {"127.0.0.1", "203.0.113.9"},
		"box.localhost":  {"127.0.0.1", "::1"},
	})
	for base, allowed := range map[string]bool{
		"https://api.openai.com/v1":  false,
		"http://embed.internal/v1":   false,
		"http://split.example/v1":    false,
		"http://unknown.example/v1":  false,
		"http://10.0.0.5:8080/v1":    false,
		"http://[2001:db8::5]:80/v1": false,
		"http://127.0.0.1:11434/v1":  true,
		"http://127.1.2.3:80":        true,
		"http://[::1]:8080/v1":       true,
		"http://box.localhost:11434": true,
		"unix:///run/ollama.sock":    true,
	} {
		c := DefaultConfig()
		c.Provider, c.BaseURL, c.ModelName, c.BatchSize, c.LocalOnly = ProviderOpenAI, base, "m", 64, true
		err := c.Validate()
		if allowed && err != nil {
			t.Errorf("STRATA_LOCAL_ONLY refused %s: %v", base, err)
		}
		if !allowed {
			if err == nil {
				t.Errorf("STRATA_LOCAL_ONLY allowed %s", base)
			} else if !strings.Contains(err.Error(), "STRATA_LOCAL_ONLY") || !strings.Contains(err.Error(), "EMBEDDING_BASE_URL") {
				t.Errorf("refusal of %s does not say why: %v", base, err)
			}
		}
		c.LocalOnly = false
		if err := c.Validate(); err != nil {
			t.Errorf("without STRATA_LOCAL_ONLY, %s was refused: %v", base, err)
		}
	}
}

func TestLocalOnlyResolvesLocalhost(t *testing.T) {
	// The real resolver: localhost must resolve to loopback addresses only.
	c := DefaultConfig()
	c.Provider, c.BaseURL, c.ModelName, c.BatchSize, c.LocalOnly = ProviderOpenAI, "http://localhost:11434/v1", "m", 64, true
	if err := c.Validate(); err != nil {
		t.Fatalf("STRATA_LOCAL_ONLY refused localhost: %v", err)
	}
	fakeLookup(t, map[string][]string{"localhost": {"198.51.100.7"}})
	if err := c.Validate(); err == nil {
		t.Fatal("a localhost that resolves off the machine was allowed")
	}
}

func TestLocalOnlyAllowsLocalModel(t *testing.T) {
	c, err := ConfigFromEnv(env(map[string]string{"STRATA_LOCAL_ONLY": "1", "EMBEDDING_BASE_URL": "https://api.openai.com/v1"}))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("the local model was refused under STRATA_LOCAL_ONLY (a stray base URL is unused): %v", err)
	}
}

func TestConfigNeverShowsKey(t *testing.T) {
	c := DefaultConfig()
	c.Provider, c.BaseURL, c.ModelName, c.APIKey, c.BatchSize = ProviderOpenAI, "https://user:pw-"+testKey+"@host/v1?key="+testKey, "m", testKey, 64
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	logger.Info("starting", "embedding", c)
	slog.New(slog.NewTextHandler(&buf, nil)).Info("starting", "embedding", c)
	shown := buf.String() + c.String() + fmt.Sprintf("%v %+v %#v %s", c, c, c, c)
	if strings.Contains(shown, testKey) {
		t.Fatalf("the key shows:\n%s", shown)
	}
	if !strings.Contains(buf.String(), `"api_key":"set"`) || !strings.Contains(c.String(), "model=m") {
		t.Errorf("the description lost its content:\n%s\n%s", buf.String(), c)
	}
	c.APIKey = ""
	if !strings.Contains(c.String(), "api_key=unset") {
		t.Errorf("String() = %s, want api_key=unset", c)
	}
}

func TestConfigThreads(t *testing.T) {
	c, err := ConfigFromEnv(env(map[string]string{"EMBEDDING_THREADS": " 3 "}))
	if err != nil || c.IntraOpThreads != 3 {
		t.Fatalf("EMBEDDING_THREADS=3 gave %d threads (%v)", c.IntraOpThreads, err)
	}
	if !strings.Contains(c.String(), "threads=3") {
		t.Errorf("String() does not show the threads: %s", c)
	}
	if d := DefaultConfig(); d.IntraOpThreads != 0 {
		t.Errorf("default threads %d, want 0 (the model's default)", d.IntraOpThreads)
	}
}

func TestConfigQueryInt8(t *testing.T) {
	if DefaultConfig().QueryInt8 {
		t.Error("queries go through the int8 export by default")
	}
	c, err := ConfigFromEnv(env(map[string]string{"EMBEDDING_QUERY_INT8": "true"}))
	if err != nil || !c.QueryInt8 {
		t.Fatalf("EMBEDDING_QUERY_INT8=true gave %t (%v)", c.QueryInt8, err)
	}
	if !strings.Contains(c.String(), "query_int8=true") {
		t.Errorf("String() does not show it: %s", c)
	}
	if _, err := ConfigFromEnv(env(map[string]string{"EMBEDDING_QUERY_INT8": "sometimes"})); err == nil ||
		!strings.Contains(err.Error(), "EMBEDDING_QUERY_INT8") {
		t.Errorf("EMBEDDING_QUERY_INT8=sometimes: %v, want an error naming it", err)
	}
}

// TestConfigSharedRules: the embedding variables follow the rules every
// daemon variable does (internal/config/configtest).
func TestConfigSharedRules(t *testing.T) {
	remote := map[string]string{"EMBEDDING_PROVIDER": "openai_compatible", "EMBEDDING_BASE_URL": "http://127.0.0.1:8080/v1", "EMBEDDING_MODEL": "m"}
	load := func(m map[string]string) (Config, error) {
		c, err := ConfigFromEnv(env(m))
		if err == nil {
			err = c.Validate()
		}
		return c, err
	}
	configtest.Bools(t, remote, load, map[string]func(Config) bool{"STRATA_LOCAL_ONLY": func(c Config) bool { return c.LocalOnly }})
	configtest.Durations(t, remote, load, []configtest.Duration[Config]{
		configtest.D("EMBEDDING_TIMEOUT", DefaultTimeout, func(c Config) time.Duration { return c.Timeout }),
	})
	configtest.Ints(t, remote, load, []configtest.Int[Config]{
		configtest.I("EMBEDDING_BATCH_SIZE", DefaultRemoteBatchSize, map[string]int{"2048": 2048}, []string{"0", "2049"},
			func(c Config) int { return c.BatchSize }),
		configtest.I("EMBEDDING_MAX_RETRIES", DefaultMaxRetries, map[string]int{"0": 0}, []string{"-1", "21"},
			func(c Config) int { return c.MaxRetries }),
	})
}
