package app

import (
	"runtime"
	"testing"
	"time"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/internal/config/configtest"
	"github.com/stratakb/stratakb/jobs"
)

// configBase is the least environment ingestd starts with; no test in this
// file connects to it.
var configBase = map[string]string{"DATABASE_URL": "postgres://strata@db.example/strata"}

func loadConfig(env map[string]string) (Config, error) {
	return LoadConfig(func(k string) string { return env[k] })
}

func TestConfigDefaults(t *testing.T) {
	c, err := loadConfig(configBase)
	if err != nil {
		t.Fatal(err)
	}
	if c.Workers != jobs.DefaultWorkers(runtime.NumCPU()) || c.MaxFileMB != DefaultMaxFileMB || c.Schedule != nil ||
		c.Embed != embed.DefaultConfig() || c.DatabaseURL != configBase["DATABASE_URL"] {
		t.Errorf("defaults: %+v", c)
	}
}

// TestConfigVariables runs the same good and bad values as queryd's test
// over every ingestd variable of each kind.
func TestConfigVariables(t *testing.T) {
	configtest.Bools(t, configBase, loadConfig, map[string]func(Config) bool{
		"STRATA_LOCAL_ONLY": func(c Config) bool { return c.Embed.LocalOnly },
	})
	configtest.Durations(t, configBase, loadConfig, []configtest.Duration[Config]{
		configtest.D("EMBEDDING_TIMEOUT", 60*time.Second, func(c Config) time.Duration { return c.Embed.Timeout }),
	})
	configtest.Ints(t, configBase, loadConfig, []configtest.Int[Config]{
		configtest.I("INGEST_WORKERS", jobs.DefaultWorkers(runtime.NumCPU()), map[string]int{"1": 1, " 12 ": 12}, []string{"0", "257", "-3"},
			func(c Config) int { return c.Workers }),
		configtest.I("INGEST_MAX_FILE_MB", DefaultMaxFileMB, map[string]int{"1": 1, "500": 500}, []string{"0", "10241"},
			func(c Config) int { return c.MaxFileMB }),
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
	configtest.Enums(t, configBase, loadConfig, []configtest.Enum[Config]{
		{Name: "EMBEDDING_PROVIDER", Def: embed.ProviderLocal,
			Good: map[string]string{"local": embed.ProviderLocal, "openai_compatible": embed.ProviderOpenAI},
			Get:  func(c Config) string { return c.Embed.Provider },
			Env:  map[string]string{"EMBEDDING_BASE_URL": "http://127.0.0.1:11434/v1", "EMBEDDING_MODEL": "e5-small-v2"}},
		{Name: "LOG_LEVEL", Def: "INFO",
			Good: map[string]string{"debug": "DEBUG", "warn": "WARN", "error": "ERROR"},
			Get:  func(c Config) string { return c.LogLevel.String() }},
	})
}

func TestConfigScheduleAndEmbedding(t *testing.T) {
	for v, want := range map[string]jobs.Schedule{
		"6h": {Interval: 6 * time.Hour}, " daily 02:30 ": {Daily: 2*time.Hour + 30*time.Minute},
	} {
		c, err := loadConfig(configtest.With(configBase, "INGEST_SCHEDULE", v))
		if err != nil || c.Schedule == nil || *c.Schedule != want {
			t.Errorf("INGEST_SCHEDULE=%q: %+v, %v", v, c.Schedule, err)
		}
	}
	for _, v := range []string{"30s", "weekly", "daily 25:00"} {
		configtest.Refused(t, configBase, loadConfig, "INGEST_SCHEDULE", v)
	}
	// A remote endpoint under STRATA_LOCAL_ONLY stops ingestd at start.
	configtest.Refused(t, configtest.With(configBase, "EMBEDDING_PROVIDER", "openai_compatible", "EMBEDDING_MODEL", "m",
		"STRATA_LOCAL_ONLY", "yes"), loadConfig, "EMBEDDING_BASE_URL", "http://203.0.113.5/v1", "STRATA_LOCAL_ONLY")
	if _, err := loadConfig(map[string]string{"STRATA_HOME": t.TempDir()}); !configtest.Names(err, "DATABASE_URL") {
		t.Errorf("no database URL: %v", err)
	}
}

// TestConfigReportsEveryProblem: one run names every bad variable.
func TestConfigReportsEveryProblem(t *testing.T) {
	_, err := loadConfig(configtest.With(configBase, "INGEST_WORKERS", "many", "INGEST_MAX_FILE_MB", "0",
		"STRATA_LOCAL_ONLY", "perhaps", "EMBEDDING_TIMEOUT", "1.5", "INGEST_SCHEDULE", "never", "LOG_LEVEL", "loud"))
	for _, name := range []string{"INGEST_WORKERS", "INGEST_MAX_FILE_MB", "STRATA_LOCAL_ONLY", "EMBEDDING_TIMEOUT", "INGEST_SCHEDULE", "LOG_LEVEL"} {
		if !configtest.Names(err, name) {
			t.Errorf("error %v\ndoes not name %s", err, name)
		}
	}
	c := Config{Workers: 0, MaxFileMB: -1, Embed: embed.DefaultConfig()}
	c.Embed.BatchSize = 0
	err = c.Validate()
	for _, name := range []string{"DATABASE_URL", "INGEST_WORKERS", "INGEST_MAX_FILE_MB", "EMBEDDING_BATCH_SIZE"} {
		if !configtest.Names(err, name) {
			t.Errorf("Validate() = %v\ndoes not name %s", err, name)
		}
	}
}

// TestConfigPathsUnderHome: the local model's and ONNX Runtime's default
// paths resolve against STRATA_HOME, so ingestd run from another folder
// finds them; paths set in the environment stay as given.
func TestConfigPathsUnderHome(t *testing.T) {
	env := map[string]string{"DATABASE_URL": configBase["DATABASE_URL"], "STRATA_HOME": "/srv/strata"}
	c, err := loadConfig(env)
	if err != nil {
		t.Fatal(err)
	}
	if c.Embed.LibraryPath != "/srv/strata/var/lib/libonnxruntime.so.1" {
		t.Errorf("ONNX Runtime's library: %q", c.Embed.LibraryPath)
	}
	if name, dir := c.Embed.LocalModel(); name != embed.DefaultLocalModel || dir != "/srv/strata/var/models/"+embed.DefaultLocalModel {
		t.Errorf("local model: %q in %q", name, dir)
	}
	if c.DatabaseURLFrom != "DATABASE_URL" {
		t.Errorf("DatabaseURLFrom = %q", c.DatabaseURLFrom)
	}
	env["STRATA_MODEL_DIR"], env["ONNXRUNTIME_LIB"], env["EMBEDDING_MODEL"] = "models/mine", "lib/ort.so", "e5-small-v2"
	if c, err = loadConfig(env); err != nil {
		t.Fatal(err)
	}
	if c.Embed.ModelDir != "models/mine" || c.Embed.LibraryPath != "lib/ort.so" {
		t.Errorf("paths set in the environment changed: %q, %q", c.Embed.ModelDir, c.Embed.LibraryPath)
	}
	delete(env, "STRATA_MODEL_DIR")
	if c, err = loadConfig(env); err != nil {
		t.Fatal(err)
	}
	if _, dir := c.Embed.LocalModel(); dir != "/srv/strata/var/models/e5-small-v2" {
		t.Errorf("EMBEDDING_MODEL's folder: %q", dir)
	}
}
