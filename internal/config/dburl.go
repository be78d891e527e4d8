// Package config holds what both daemons' configurations share: finding the
// database, reading booleans and levels from the environment.
package config

import (
	"bufio"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
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

// Bool parses a boolean variable; empty gives def.
func Bool(getenv func(string) string, name string, def bool) (bool, error) {
	v := getenv(name)
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return def, fmt.Errorf("%s: %q is not a boolean (true or false)", name, v)
	}
	return b, nil
}

// Int parses an integer variable within [lo, hi]; empty gives def.
func Int(getenv func(string) string, name string, def, lo, hi int) (int, error) {
	v := getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return def, fmt.Errorf("%s: %q must be a whole number from %d to %d", name, v, lo, hi)
	}
	return n, nil
}

// LogLevel parses LOG_LEVEL (debug, info, warn, error; default info).
func LogLevel(getenv func(string) string) (slog.Level, error) {
	v := getenv("LOG_LEVEL")
	if v == "" {
		return slog.LevelInfo, nil
	}
	var l slog.Level
	if err := l.UnmarshalText([]byte(v)); err != nil {
		return l, fmt.Errorf("LOG_LEVEL: %q is not one of debug, info, warn, error", v)
	}
	return l, nil
}

// ParseInterleaved parses flags that may come before or after positional
// arguments (ingestd add DIR --layer NAME) and returns the positionals in
// order. Errors are the flag package's, flag.ErrHelp included.
func ParseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}
