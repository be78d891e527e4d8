package config

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// DatabaseURL returns DATABASE_URL, or else the one `make db-start` wrote to
// var/db.env under STRATA_HOME or the working directory.
func DatabaseURL(getenv func(string) string) (string, error) {
	if u := getenv("DATABASE_URL"); u != "" {
		return u, nil
	}
	return FromDBEnv(getenv, "DATABASE_URL")
}

// QuerydDatabaseURL returns the connection queryd uses: QUERYD_DATABASE_URL,
// else DATABASE_URL, else QUERYD_DATABASE_URL from var/db.env (the read-only
// role `make db-start` creates), else that file's DATABASE_URL. A variable
// set in the environment wins over the file, so a DATABASE_URL pointing at
// another database is never paired with the file's role.
func QuerydDatabaseURL(getenv func(string) string) (string, error) {
	for _, name := range []string{"QUERYD_DATABASE_URL", "DATABASE_URL"} {
		if u := getenv(name); u != "" {
			return u, nil
		}
	}
	if u, err := FromDBEnv(getenv, "QUERYD_DATABASE_URL"); err == nil {
		return u, nil
	}
	return FromDBEnv(getenv, "DATABASE_URL")
}

// QuerydReadDatabaseURL returns QUERYD_READ_DATABASE_URL, where queryd's
// reads may go (a read replica of the database), else primary: queryd's
// main connection, which its writes (the ledger) always use.
func QuerydReadDatabaseURL(getenv func(string) string, primary string) string {
	if u := getenv("QUERYD_READ_DATABASE_URL"); u != "" {
		return u
	}
	return primary
}

// dbEnvPath is var/db.env under STRATA_HOME (default: the working directory).
func dbEnvPath(getenv func(string) string) string {
	home := getenv("STRATA_HOME")
	if home == "" {
		home = "."
	}
	return filepath.Join(home, "var", "db.env")
}

// FromDBEnv reads the variable name from var/db.env, the file `make
// db-start` writes.
func FromDBEnv(getenv func(string) string, name string) (string, error) {
	p := dbEnvPath(getenv)
	f, err := os.Open(p)
	if err != nil {
		return "", fmt.Errorf("%s is not set and %s cannot be read (run 'make db-start'): %w", name, p, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+"="); ok && v != "" {
			return v, nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("read %s: %w", p, err)
	}
	return "", fmt.Errorf("%s is not set and %s holds none (run 'make db-start')", name, p)
}
