package app

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/internal/config"
	"github.com/stratakb/stratakb/jobs"
)

// Bounds of the INGEST_* variables.
const (
	DefaultMaxFileMB = 100
	MaxWorkers       = 256
	MaxMaxFileMB     = 10240
)

// Config is ingestd's configuration, read from the environment.
type Config struct {
	DatabaseURL string // DATABASE_URL, else var/db.env written by `make db-start`
	// DatabaseURLFrom says where DatabaseURL came from, for errors:
	// "DATABASE_URL" or the var/db.env file's path.
	DatabaseURLFrom string
	LogLevel        slog.Level // LOG_LEVEL
	Workers         int        // INGEST_WORKERS: files processed at once
	MaxFileMB       int        // INGEST_MAX_FILE_MB: larger files are refused
	// Schedule re-ingests every layer (INGEST_SCHEDULE: "6h" or "daily 02:30");
	// nil when unset.
	Schedule *jobs.Schedule
	// Embed configures the embedding provider (EMBEDDING_PROVIDER and the
	// other EMBEDDING_* variables, STRATA_LOCAL_ONLY, STRATA_MODEL_DIR,
	// ONNXRUNTIME_LIB). Validate checks it: a wrong one stops every verb,
	// so that it shows before a run instead of failing every file.
	Embed embed.Config
}

// DefaultConfig returns the configuration with no variable set, but for the
// database URL, which has no default.
func DefaultConfig() Config {
	return Config{
		LogLevel:  slog.LevelInfo,
		Workers:   jobs.DefaultWorkers(runtime.NumCPU()),
		MaxFileMB: DefaultMaxFileMB,
		Embed:     embed.DefaultConfig(),
	}
}

// LoadConfig builds the configuration: defaults, then the environment
// through internal/config, then Validate. It reports every problem, each
// starting with its variable's name.
//
// Default paths (var/db.env, var/models, var/lib) resolve against
// STRATA_HOME, else the checkout ingestd was built in, else the working
// directory (config.Home).
func LoadConfig(getenv func(string) string) (Config, error) {
	getenv = config.WithHome(getenv)
	c := DefaultConfig()
	r := config.NewReader(getenv)
	var err error
	c.DatabaseURL, err = config.DatabaseURL(getenv)
	r.Add(err)
	c.DatabaseURLFrom = "DATABASE_URL"
	if getenv("DATABASE_URL") == "" {
		c.DatabaseURLFrom = filepath.Join(config.UnderHome(getenv(config.HomeVar), "var"), "db.env")
	}
	c.LogLevel, err = config.LogLevel(getenv)
	r.Add(err)
	r.Int("INGEST_WORKERS", &c.Workers, 1, MaxWorkers)
	r.Int("INGEST_MAX_FILE_MB", &c.MaxFileMB, 1, MaxMaxFileMB)
	if v := config.String(getenv, "INGEST_SCHEDULE", ""); v != "" {
		s, err := jobs.ParseSchedule(v) // its errors start with INGEST_SCHEDULE
		r.Add(err)
		if err == nil {
			c.Schedule = &s
		}
	}
	c.Embed, err = embed.ConfigFromEnv(getenv)
	r.Add(err)
	homeEmbedPaths(getenv, &c.Embed)
	if err := r.Err(); err != nil {
		return c, err
	}
	return c, c.Validate()
}

// Validate checks the configuration as a whole and reports every problem,
// each naming its variable.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.DatabaseURL == "" {
		bad("DATABASE_URL: must be set (or var/db.env from 'make db-start')")
	}
	if c.Workers < 1 || c.Workers > MaxWorkers {
		bad("INGEST_WORKERS: %d is out of range 1-%d", c.Workers, MaxWorkers)
	}
	if c.MaxFileMB < 1 || c.MaxFileMB > MaxMaxFileMB {
		bad("INGEST_MAX_FILE_MB: %d is out of range 1-%d", c.MaxFileMB, MaxMaxFileMB)
	}
	if err := c.Embed.Validate(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("ingestd configuration: %w", errors.Join(errs...))
	}
	return nil
}

// homeEmbedPaths resolves the local model's default folder and ONNX
// Runtime's default library against STRATA_HOME (set by config.WithHome
// to the checkout when unset). Paths the user set stay as given.
func homeEmbedPaths(getenv func(string) string, c *embed.Config) {
	home := getenv(config.HomeVar)
	if home == "" || c.Provider != embed.ProviderLocal {
		return
	}
	if !config.IsSet(getenv, "ONNXRUNTIME_LIB") {
		c.LibraryPath = config.UnderHome(home, embed.DefaultLibraryPath)
	}
	if !config.IsSet(getenv, "STRATA_MODEL_DIR") && (c.ModelName == "" || embed.KnownLocalModel(c.ModelName)) {
		name, dir := c.LocalModel()
		c.ModelName, c.ModelDir = name, config.UnderHome(home, dir)
	}
}
