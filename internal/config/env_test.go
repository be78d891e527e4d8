package config

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

func one(name, v string) Getenv {
	return func(k string) string {
		if k == name {
			return v
		}
		return ""
	}
}

// TestBool: one rule for every boolean, whatever the case and white space.
func TestBool(t *testing.T) {
	for v, want := range map[string]bool{
		"true": true, "TRUE": true, " True ": true, "1": true, "yes": true, "YES": true, "on": true, "On": true,
		"false": false, "False": false, "0": false, "no": false, "No": false, "off": false, "OFF\n": false,
	} {
		for _, def := range []bool{true, false} {
			got, err := Bool(one("X_FLAG", v), "X_FLAG", def)
			if err != nil || got != want {
				t.Errorf("Bool(%q, default %t) = %t, %v; want %t", v, def, got, err, want)
			}
		}
	}
	for _, def := range []bool{true, false} {
		for _, v := range []string{"", "  "} {
			if got, err := Bool(one("X_FLAG", v), "X_FLAG", def); err != nil || got != def {
				t.Errorf("Bool(%q, default %t) = %t, %v; want the default", v, def, got, err)
			}
		}
	}
	for _, v := range []string{"maybe", "y", "n", "t", "f", "2", "-1", "enabled", "true!"} {
		_, err := Bool(one("X_FLAG", v), "X_FLAG", false)
		if err == nil || !strings.HasPrefix(err.Error(), "X_FLAG: ") || !strings.Contains(err.Error(), BoolWords) {
			t.Errorf("Bool(%q): error %v; want one starting with the name and listing %s", v, err, BoolWords)
		}
	}
}

func TestInt(t *testing.T) {
	for _, tc := range []struct {
		v      string
		lo, hi int
		want   int
		err    string
	}{
		{"", 1, 10, 7, ""},
		{" 3 ", 1, 10, 3, ""},
		{"1", 1, 10, 1, ""},
		{"10", 1, 10, 10, ""},
		{"0", 1, 10, 7, "from 1 to 10"},
		{"11", 1, 10, 7, "from 1 to 10"},
		{"2.5", 1, 10, 7, "from 1 to 10"},
		{"lots", 1, 10, 7, "from 1 to 10"},
		{"-5", math.MinInt, math.MaxInt, -5, ""},
		{"x", math.MinInt, math.MaxInt, 7, "a whole number"},
		{"-1", 0, math.MaxInt, 7, "at least 0"},
	} {
		got, err := Int(one("X_N", tc.v), "X_N", 7, tc.lo, tc.hi)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("Int(%q) = %d, %v; want %d", tc.v, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.HasPrefix(err.Error(), "X_N: ") || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("Int(%q): error %v; want X_N: ... %s", tc.v, err, tc.err)
		case tc.err != "" && got != tc.want:
			t.Errorf("Int(%q) gave %d with its error; want the default", tc.v, got)
		}
	}
}

// TestDuration: a Go duration or whole seconds, range-checked.
func TestDuration(t *testing.T) {
	for v, want := range map[string]time.Duration{
		"":       5 * time.Second, // the default
		"30":     30 * time.Second,
		" 30 ":   30 * time.Second,
		"30s":    30 * time.Second,
		"2m":     2 * time.Minute,
		"1m30s":  90 * time.Second,
		"1500ms": 1500 * time.Millisecond,
		"1":      time.Second,
		"600":    10 * time.Minute,
	} {
		got, err := Duration(one("X_WAIT", v), "X_WAIT", 5*time.Second, time.Second, 10*time.Minute)
		if err != nil || got != want {
			t.Errorf("Duration(%q) = %s, %v; want %s", v, got, err, want)
		}
	}
	for v, why := range map[string]string{
		"soon": "30s", "30 s": "30s", "1.5": "30s", "2 minutes": "30s", "s": "30s",
		"0": "out of range", "500ms": "out of range", "-30": "out of range", "601": "out of range", "1h": "out of range",
		"99999999999999": "too long",
	} {
		got, err := Duration(one("X_WAIT", v), "X_WAIT", 5*time.Second, time.Second, 10*time.Minute)
		if err == nil || !strings.HasPrefix(err.Error(), "X_WAIT: ") || !strings.Contains(err.Error(), why) {
			t.Errorf("Duration(%q): error %v; want X_WAIT: ... %s", v, err, why)
		}
		if got != 5*time.Second {
			t.Errorf("Duration(%q) gave %s with its error; want the default", v, got)
		}
	}
	if d, err := Duration(one("X_WAIT", "10h"), "X_WAIT", 0, 0, 0); err != nil || d != 10*time.Hour {
		t.Errorf("unbounded Duration(10h) = %s, %v", d, err)
	}
}

func TestList(t *testing.T) {
	for v, want := range map[string][]string{
		"":              nil,
		" , ,":          nil,
		"a":             {"a"},
		" a , b,,c ,":   {"a", "b", "c"},
		"x y, z":        {"x y", "z"},
		"https://a/, b": {"https://a/", "b"},
	} {
		if got := List(one("X_L", v), "X_L"); !slices.Equal(got, want) {
			t.Errorf("List(%q) = %q, want %q", v, got, want)
		}
	}
}

func TestStringAndOneOf(t *testing.T) {
	if got := String(one("X_S", "  v  "), "X_S", "d"); got != "v" {
		t.Errorf("String = %q", got)
	}
	if got := String(one("X_S", " "), "X_S", "d"); got != "d" {
		t.Errorf("blank String = %q, want the default", got)
	}
	for v, want := range map[string]string{"": "none", "None": "none", " OPENAI ": "openai", "anthropic": "anthropic"} {
		got, err := OneOf(one("X_P", v), "X_P", "none", "anthropic", "openai", "none")
		if err != nil || got != want {
			t.Errorf("OneOf(%q) = %q, %v; want %q", v, got, err, want)
		}
	}
	_, err := OneOf(one("X_P", "cohere"), "X_P", "none", "anthropic", "openai", "none")
	if err == nil || !strings.HasPrefix(err.Error(), "X_P: ") || !strings.Contains(err.Error(), "anthropic, openai, none") {
		t.Errorf("OneOf(cohere): error %v; want the name and the choices", err)
	}
}

func TestLogLevel(t *testing.T) {
	for v, want := range map[string]slog.Level{"": slog.LevelInfo, "debug": slog.LevelDebug, " WARN ": slog.LevelWarn, "Error": slog.LevelError} {
		if got, err := LogLevel(one("LOG_LEVEL", v)); err != nil || got != want {
			t.Errorf("LogLevel(%q) = %v, %v", v, got, err)
		}
	}
	if _, err := LogLevel(one("LOG_LEVEL", "loud")); err == nil || !strings.HasPrefix(err.Error(), "LOG_LEVEL: ") {
		t.Errorf("LogLevel(loud): %v", err)
	}
}

// TestReaderReportsEveryError: a Reader keeps going after a bad value, keeps
// the defaults of the bad ones and reports them all.
func TestReaderReportsEveryError(t *testing.T) {
	env := map[string]string{"A_BOOL": "maybe", "B_INT": "x", "C_WAIT": "later", "D_KIND": "odd", "E_OK": "yes", "F_LIST": "p, q", "G_KEY": " k "}
	r := NewReader(func(k string) string { return env[k] })
	b, n, d, kind, ok, list, key := true, 3, time.Second, "a", false, []string{"z"}, ""
	r.Bool("A_BOOL", &b)
	r.Int("B_INT", &n, 0, 10)
	r.Duration("C_WAIT", &d, 0, 0)
	r.OneOf("D_KIND", &kind, "a", "b")
	r.Bool("E_OK", &ok)
	r.List("F_LIST", &list)
	r.Secret("G_KEY", &key)
	r.Add(nil)
	err := r.Err()
	for _, name := range []string{"A_BOOL", "B_INT", "C_WAIT", "D_KIND"} {
		if err == nil || !strings.Contains(err.Error(), name+": ") {
			t.Errorf("Err() = %v; want it to name %s", err, name)
		}
	}
	if strings.Contains(fmt.Sprint(err), "E_OK") {
		t.Errorf("a good value was reported: %v", err)
	}
	if !b || n != 3 || d != time.Second || kind != "a" || !ok || !slices.Equal(list, []string{"p", "q"}) || key != "k" {
		t.Errorf("values after reading: %t %d %s %q %t %q %q", b, n, d, kind, ok, list, key)
	}
	if NewReader(func(string) string { return "" }).Err() != nil {
		t.Error("an empty environment gave an error")
	}
}

func TestCheckLoopback(t *testing.T) {
	table := map[string][]string{
		"localhost":     {"127.0.0.1", "::1"},
		"box.internal":  {"10.1.2.3"},
		"split.example": {"127.0.0.1", "203.0.113.9"},
		"empty.example": {},
	}
	lookup := func(_ context.Context, host string) ([]net.IPAddr, error) {
		ips, ok := table[host]
		if !ok {
			return nil, errors.New("no such host")
		}
		var out []net.IPAddr
		for _, s := range ips {
			out = append(out, net.IPAddr{IP: net.ParseIP(s)})
		}
		return out, nil
	}
	for host, local := range map[string]bool{
		"127.0.0.1": true, "127.8.9.1": true, "::1": true, "localhost": true,
		"10.0.0.1": false, "2001:db8::1": false, "box.internal": false, "split.example": false,
		"empty.example": false, "unknown.example": false,
	} {
		err := CheckLoopback(host, lookup)
		if local != (err == nil) {
			t.Errorf("CheckLoopback(%s) = %v; want local=%t", host, err, local)
		}
		if err != nil && !strings.Contains(err.Error(), host) {
			t.Errorf("CheckLoopback(%s): %v does not name the host", host, err)
		}
	}
}
