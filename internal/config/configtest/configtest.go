// Package configtest holds the cases every daemon's configuration test runs
// over its variables, so that a boolean, a duration or a number is accepted
// and refused the same way everywhere: each test lists its variables by kind
// and these functions try the same good and bad values on each.
package configtest

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stratakb/stratakb/internal/config"
)

// Load builds a daemon's configuration from env (unset variables read "").
type Load[C any] func(env map[string]string) (C, error)

// BoolTrue and BoolFalse are spellings every boolean variable accepts;
// BoolBad are values every one refuses.
var (
	BoolTrue  = []string{"true", "TRUE", " yes ", "Yes", "on", "1"}
	BoolFalse = []string{"false", "False", "no", "OFF", "0", " 0 "}
	BoolBad   = []string{"maybe", "y", "t", "2", "enabled"}
)

// DurationGood maps values every duration variable accepts (its range
// permitting) to what they mean; DurationBad are values every one refuses.
var (
	DurationGood = map[string]time.Duration{"30": 30 * time.Second, " 30 ": 30 * time.Second, "30s": 30 * time.Second, "2m": 2 * time.Minute}
	DurationBad  = []string{"soon", "30 s", "1.5", "-5s", "-30", "2h", "forever"}
)

// IntBad are values no whole-number variable accepts.
var IntBad = []string{"lots", "1.5", "3x", "0x10"}

// prefix strips "queryd configuration: " and the like from a line.
var prefix = regexp.MustCompile(`^([a-z]+ )?configuration: `)

// Names reports whether one of the problems in err starts with the
// variable's name (after the daemon's "... configuration: " prefixes).
func Names(err error, name string) bool {
	if err == nil {
		return false
	}
	for _, line := range strings.Split(err.Error(), "\n") {
		for {
			l := prefix.ReplaceAllString(line, "")
			if l == line {
				break
			}
			line = l
		}
		if strings.HasPrefix(line, name+": ") || strings.HasPrefix(line, name+" ") {
			return true
		}
	}
	return false
}

func with(base map[string]string, kv ...string) map[string]string {
	m := make(map[string]string, len(base)+len(kv)/2)
	for k, v := range base {
		m[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// Refused checks that name=v is refused, with a problem starting with the
// name that contains each of the words.
func Refused[C any](t *testing.T, base map[string]string, load Load[C], name, v string, words ...string) {
	t.Helper()
	_, err := load(with(base, name, v))
	if !Names(err, name) {
		t.Errorf("%s=%q: error %v; want a problem starting with %s", name, v, err, name)
		return
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s=%q: error %v does not say %q", name, v, err, w)
		}
	}
}

// Bools tries every boolean spelling on each variable; get reads the
// variable's field from the configuration.
func Bools[C any](t *testing.T, base map[string]string, load Load[C], vars map[string]func(C) bool) {
	t.Helper()
	for name, get := range vars {
		for want, vals := range map[bool][]string{true: BoolTrue, false: BoolFalse} {
			for _, v := range vals {
				c, err := load(with(base, name, v))
				if err != nil || get(c) != want {
					t.Errorf("%s=%q: %t, %v; want %t", name, v, get(c), err, want)
				}
			}
		}
		for _, v := range BoolBad {
			Refused(t, base, load, name, v, config.BoolWords)
		}
	}
}

// Duration is a duration variable and its field.
type Duration[C any] struct {
	Name string
	Def  time.Duration
	Get  func(C) time.Duration
}

// Durations tries the shared good and bad durations on each variable, and
// checks its default.
func Durations[C any](t *testing.T, base map[string]string, load Load[C], vars []Duration[C]) {
	t.Helper()
	for _, d := range vars {
		c, err := load(base)
		if err != nil || d.Get(c) != d.Def {
			t.Errorf("%s unset: %s, %v; want the default %s", d.Name, d.Get(c), err, d.Def)
		}
		for v, want := range DurationGood {
			c, err := load(with(base, d.Name, v))
			if err != nil || d.Get(c) != want {
				t.Errorf("%s=%q: %s, %v; want %s", d.Name, v, d.Get(c), err, want)
			}
		}
		for _, v := range DurationBad {
			Refused(t, base, load, d.Name, v)
		}
		Refused(t, base, load, d.Name, "soon", "30s")
	}
}

// Int is a whole-number variable: its default, values it takes and values
// out of its range.
type Int[C any] struct {
	Name string
	Def  int
	Good map[string]int
	Bad  []string
	Get  func(C) int
}

// Ints checks each whole-number variable's default, good values, the shared
// malformed values and its own out-of-range ones.
func Ints[C any](t *testing.T, base map[string]string, load Load[C], vars []Int[C]) {
	t.Helper()
	for _, n := range vars {
		c, err := load(base)
		if err != nil || n.Get(c) != n.Def {
			t.Errorf("%s unset: %d, %v; want the default %d", n.Name, n.Get(c), err, n.Def)
		}
		for v, want := range n.Good {
			c, err := load(with(base, n.Name, v))
			if err != nil || n.Get(c) != want {
				t.Errorf("%s=%q: %d, %v; want %d", n.Name, v, n.Get(c), err, want)
			}
		}
		for _, v := range append(append([]string{}, IntBad...), n.Bad...) {
			Refused(t, base, load, n.Name, v)
		}
	}
}

// Enum is a variable that takes one word of a set.
type Enum[C any] struct {
	Name string
	Def  string
	Good map[string]string // value → the word it gives (case does not matter)
	Get  func(C) string
	// Env, when set, is added to the base for the good values (what a
	// provider needs besides its name).
	Env map[string]string
}

// Enums checks each word variable's default, its words in any case, and
// that an unknown word is refused.
func Enums[C any](t *testing.T, base map[string]string, load Load[C], vars []Enum[C]) {
	t.Helper()
	for _, e := range vars {
		c, err := load(base)
		if err != nil || e.Get(c) != e.Def {
			t.Errorf("%s unset: %q, %v; want the default %q", e.Name, e.Get(c), err, e.Def)
		}
		good := with(base)
		for k, v := range e.Env {
			good[k] = v
		}
		for v, want := range e.Good {
			for _, vv := range []string{v, strings.ToUpper(v), " " + v + " "} {
				c, err := load(with(good, e.Name, vv))
				if err != nil || e.Get(c) != want {
					t.Errorf("%s=%q: %q, %v; want %q", e.Name, vv, e.Get(c), err, want)
				}
			}
		}
		Refused(t, base, load, e.Name, "no-such-word")
	}
}

// With returns base with the pairs k1, v1, k2, v2... set.
func With(base map[string]string, kv ...string) map[string]string { return with(base, kv...) }

// D makes a Duration case.
func D[C any](name string, def time.Duration, get func(C) time.Duration) Duration[C] {
	return Duration[C]{Name: name, Def: def, Get: get}
}

// I makes an Int case.
func I[C any](name string, def int, good map[string]int, bad []string, get func(C) int) Int[C] {
	return Int[C]{Name: name, Def: def, Good: good, Bad: bad, Get: get}
}
