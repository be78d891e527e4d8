// Package dbtest gives tests a database of their own on the PostgreSQL that
// `make test` starts (TEST_DATABASE_URL). Each call creates a fresh database,
// dropped when the test ends. Without TEST_DATABASE_URL a test is skipped,
// except under CI=true, where it fails: CI never passes by skipping.
package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// URL returns TEST_DATABASE_URL, or skips (fails under CI) when it is unset or
// unreachable.
func URL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("TEST_DATABASE_URL")
	if u == "" {
		missing(t, "TEST_DATABASE_URL is not set (run the tests with `make test`)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		missing(t, fmt.Sprintf("cannot reach TEST_DATABASE_URL: %v", err))
	}
	conn.Close(ctx)
	return u
}

func missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("database required under CI: %s", why)
	}
	t.Skip(why)
}

// NewDatabase creates an empty database for the test and returns its URL. The
// database is dropped when the test ends.
func NewDatabase(t testing.TB) string {
	t.Helper()
	base := URL(t)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("dbtest: connect: %v", err)
	}
	defer admin.Close(ctx)
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "t_" + sanitize(t.Name()) + "_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("dbtest: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Logf("dbtest: drop %s: %v", name, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Logf("dbtest: drop %s: %v", name, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("dbtest: parse TEST_DATABASE_URL: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}

// NewPool creates a database for the test and returns a pool on it, closed
// when the test ends.
func NewPool(t testing.TB) (*pgxpool.Pool, string) {
	t.Helper()
	u := NewDatabase(t)
	pool, err := pgxpool.New(context.Background(), u)
	if err != nil {
		t.Fatalf("dbtest: pool: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool, u
}

func sanitize(s string) string {
	s = strings.ToLower(s)
	var b strings.Builder
	for _, r := range s {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
		if b.Len() >= 40 {
			break
		}
	}
	return b.String()
}

// QuerydURL returns ownerURL rewritten to connect as the read-only queryd
// role, which the migrations (run on ownerURL's database first) give SELECT
// and nothing more. The role may log in; the test cluster trusts local TCP
// connections, so no password is needed.
func QuerydURL(t testing.TB, ownerURL string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, ownerURL)
	if err != nil {
		t.Fatalf("dbtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "ALTER ROLE queryd LOGIN"); err != nil {
		t.Fatalf("dbtest: let queryd log in: %v", err)
	}
	u, err := url.Parse(ownerURL)
	if err != nil {
		t.Fatalf("dbtest: parse %q: %v", ownerURL, err)
	}
	u.User = url.User("queryd")
	return u.String()
}
