// Package config is the one place where StrataKB reads its environment. Both
// daemons build their configuration the same way: defaults, then these
// parsers, then the configuration's own Validate. The parsers share one set
// of rules:
//
//   - a value is trimmed of surrounding white space; empty or unset keeps
//     the default;
//   - booleans are true/false, 1/0, yes/no or on/off in any case;
//   - durations are Go durations ("30s", "2m", "1h30m") or a bare whole
//     number of seconds ("30");
//   - lists are comma-separated; items are trimmed and empty ones dropped;
//   - every error starts with the variable's name and says what it accepts.
//
// It also finds the database (DatabaseURL) and decides whether a host is on
// this machine (CheckLoopback), for STRATA_LOCAL_ONLY.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"
)

// Getenv reads one variable; os.Getenv in a daemon, a map in tests.
type Getenv func(string) string

// BoolWords are the accepted spellings of a boolean, as error messages list
// them.
const BoolWords = "true/false, 1/0, yes/no, on/off"

// value is the trimmed value of name.
func value(getenv Getenv, name string) string { return strings.TrimSpace(getenv(name)) }

// IsSet reports whether name holds anything besides white space.
func IsSet(getenv Getenv, name string) bool { return value(getenv, name) != "" }

// ParseBool parses one boolean by the package's rule; name is for the error.
func ParseBool(name, v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1", "yes", "on":
		return true, nil
	case "false", "0", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("%s: %q is not a boolean; use one of %s", name, v, BoolWords)
}

// Bool reads a boolean variable; empty or unset gives def.
func Bool(getenv Getenv, name string, def bool) (bool, error) {
	v := value(getenv, name)
	if v == "" {
		return def, nil
	}
	b, err := ParseBool(name, v)
	if err != nil {
		return def, err
	}
	return b, nil
}

// Int reads a whole number within [lo, hi]; empty or unset gives def, which
// is not checked. Pass math.MinInt and math.MaxInt to leave the range to a
// Validate.
func Int(getenv Getenv, name string, def, lo, hi int) (int, error) {
	v := value(getenv, name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return def, fmt.Errorf("%s: %q must be %s", name, v, intRange(lo, hi))
	}
	return n, nil
}

func intRange(lo, hi int) string {
	switch {
	case lo == math.MinInt && hi == math.MaxInt:
		return "a whole number"
	case hi == math.MaxInt:
		return fmt.Sprintf("a whole number of at least %d", lo)
	case lo == math.MinInt:
		return fmt.Sprintf("a whole number of at most %d", hi)
	}
	return fmt.Sprintf("a whole number from %d to %d", lo, hi)
}

// ParseDuration parses one duration by the package's rule (a Go duration,
// or a bare whole number of seconds); name is for the error.
func ParseDuration(name, v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n > math.MaxInt64/int64(time.Second) || n < math.MinInt64/int64(time.Second) {
			return 0, fmt.Errorf("%s: %q seconds is too long", name, v)
		}
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a duration; write it like 30s, 500ms or 2m, or as whole seconds (30)", name, v)
	}
	return d, nil
}

// Duration reads a duration within [lo, hi]; empty or unset gives def, which
// is not checked. hi 0 means no upper bound.
func Duration(getenv Getenv, name string, def, lo, hi time.Duration) (time.Duration, error) {
	v := value(getenv, name)
	if v == "" {
		return def, nil
	}
	d, err := ParseDuration(name, v)
	if err != nil {
		return def, err
	}
	if d < lo || (hi > 0 && d > hi) {
		if hi > 0 {
			return def, fmt.Errorf("%s: %s is out of range %s-%s (for example 30s)", name, d, lo, hi)
		}
		return def, fmt.Errorf("%s: %s must be at least %s (for example 30s)", name, d, lo)
	}
	return d, nil
}

// List reads a comma-separated list: items trimmed, empty ones dropped. Unset
// gives nil.
func List(getenv Getenv, name string) []string {
	var out []string
	for _, s := range strings.Split(getenv(name), ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// String reads a trimmed string; empty or unset gives def.
func String(getenv Getenv, name, def string) string {
	if v := value(getenv, name); v != "" {
		return v
	}
	return def
}

// Secret reads a key or password: like String, but callers must never log or
// print what it returns.
func Secret(getenv Getenv, name string) string { return value(getenv, name) }

// OneOf reads a word from a fixed set, in any case, and returns it in lower
// case; empty or unset gives def. The error lists the set.
func OneOf(getenv Getenv, name, def string, allowed ...string) (string, error) {
	v := value(getenv, name)
	if v == "" {
		return def, nil
	}
	low := strings.ToLower(v)
	for _, a := range allowed {
		if low == a {
			return a, nil
		}
	}
	return def, fmt.Errorf("%s: %q is not one of %s", name, v, strings.Join(allowed, ", "))
}

// LogLevel reads LOG_LEVEL (debug, info, warn, error; default info).
func LogLevel(getenv Getenv) (slog.Level, error) {
	v, err := OneOf(getenv, "LOG_LEVEL", "info", "debug", "info", "warn", "error")
	if err != nil {
		return slog.LevelInfo, err
	}
	var l slog.Level
	if err := l.UnmarshalText([]byte(v)); err != nil {
		return slog.LevelInfo, fmt.Errorf("LOG_LEVEL: %w", err)
	}
	return l, nil
}

// Reader reads many variables and keeps every error, so that a daemon
// reports all of its malformed variables at once. Each method leaves *dst
// (the default) alone when the variable is unset or malformed.
type Reader struct {
	getenv Getenv
	errs   []error
}

// NewReader returns a Reader over getenv.
func NewReader(getenv Getenv) *Reader { return &Reader{getenv: getenv} }

// IsSet reports whether name holds a value.
func (r *Reader) IsSet(name string) bool { return IsSet(r.getenv, name) }

// Add records an error found outside the Reader's methods; nil is ignored.
func (r *Reader) Add(err error) {
	if err != nil {
		r.errs = append(r.errs, err)
	}
}

// Err returns every error recorded, joined, or nil.
func (r *Reader) Err() error { return errors.Join(r.errs...) }

// Bool reads a boolean into dst.
func (r *Reader) Bool(name string, dst *bool) {
	v, err := Bool(r.getenv, name, *dst)
	r.Add(err)
	*dst = v
}

// Int reads a whole number within [lo, hi] into dst; it reports whether the
// variable was set and well-formed.
func (r *Reader) Int(name string, dst *int, lo, hi int) bool {
	v, err := Int(r.getenv, name, *dst, lo, hi)
	r.Add(err)
	*dst = v
	return err == nil && r.IsSet(name)
}

// Duration reads a duration within [lo, hi] (hi 0: unbounded) into dst.
func (r *Reader) Duration(name string, dst *time.Duration, lo, hi time.Duration) {
	v, err := Duration(r.getenv, name, *dst, lo, hi)
	r.Add(err)
	*dst = v
}

// List reads a comma-separated list into dst when the variable is set.
func (r *Reader) List(name string, dst *[]string) {
	if l := List(r.getenv, name); l != nil {
		*dst = l
	}
}

// String reads a trimmed string into dst when the variable is set.
func (r *Reader) String(name string, dst *string) { *dst = String(r.getenv, name, *dst) }

// Secret reads a key into dst when the variable is set.
func (r *Reader) Secret(name string, dst *string) {
	if v := Secret(r.getenv, name); v != "" {
		*dst = v
	}
}

// OneOf reads a word from allowed into dst.
func (r *Reader) OneOf(name string, dst *string, allowed ...string) {
	v, err := OneOf(r.getenv, name, *dst, allowed...)
	r.Add(err)
	*dst = v
}
