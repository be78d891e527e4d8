package app

import (
	"fmt"
	"log/slog"
	"runtime"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/internal/config"
	"github.com/stratakb/stratakb/jobs"
)

// Config is ingestd's configuration, read from the environment.
type Config struct {
	DatabaseURL string     // DATABASE_URL, else var/db.env written by `make db-start`
	LogLevel    slog.Level // LOG_LEVEL
	Workers     int        // INGEST_WORKERS: files processed at once
	MaxFileMB   int        // INGEST_MAX_FILE_MB: larger files are refused
	// Schedule re-ingests every layer (INGEST_SCHEDULE: "6h" or "daily 02:30");
	// nil when unset.
	Schedule *jobs.Schedule
	// Embed configures the embedding provider (EMBEDDING_PROVIDER and the
	// other EMBEDDING_* variables, STRATA_LOCAL_ONLY, STRATA_MODEL_DIR,
	// ONNXRUNTIME_LIB).
	Embed embed.Config
}

// LoadConfig builds the configuration: defaults, then the environment, then
// Validate. Errors name the variable.
func LoadConfig(getenv func(string) string) (Config, error) {
	c := Config{Workers: jobs.DefaultWorkers(runtime.NumCPU()), MaxFileMB: 100}
	var err error
	if c.DatabaseURL, err = config.DatabaseURL(getenv); err != nil {
		return c, err
	}
	if c.LogLevel, err = config.LogLevel(getenv); err != nil {
		return c, err
	}
	if c.Workers, err = config.Int(getenv, "INGEST_WORKERS", c.Workers, 1, 256); err != nil {
		return c, err
	}
	if c.MaxFileMB, err = config.Int(getenv, "INGEST_MAX_FILE_MB", c.MaxFileMB, 1, 10240); err != nil {
		return c, err
	}
	if v := getenv("INGEST_SCHEDULE"); v != "" {
		s, err := jobs.ParseSchedule(v)
		if err != nil {
			return c, err
		}
		c.Schedule = &s
	}
	if c.Embed, err = embed.ConfigFromEnv(getenv); err != nil {
		return c, err
	}
	return c, c.Validate()
}

// Validate checks the configuration as a whole.
func (c Config) Validate() error {
	if c.DatabaseURL == "" {
		return fmt.Errorf("DATABASE_URL: must be set")
	}
	return nil
}
