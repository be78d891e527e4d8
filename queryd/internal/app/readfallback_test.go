package app

import (
	"context"
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/internal/config/configtest"
	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/ingesttest"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

func TestConfigReadFallback(t *testing.T) {
	c, err := load(base)
	if err != nil || c.ReadFallback != ReadFallbackNone {
		t.Fatalf("default QUERYD_READ_FALLBACK: %q, %v; want %q", c.ReadFallback, err, ReadFallbackNone)
	}
	c, err = load(configtest.With(base, "QUERYD_READ_FALLBACK", "Primary"))
	if err != nil || c.ReadFallback != ReadFallbackPrimary {
		t.Fatalf("QUERYD_READ_FALLBACK=Primary: %q, %v", c.ReadFallback, err)
	}
	if _, err := load(configtest.With(base, "QUERYD_READ_FALLBACK", "replica")); !configtest.Names(err, "QUERYD_READ_FALLBACK") {
		t.Errorf("QUERYD_READ_FALLBACK=replica: %v, want an error naming the variable", err)
	}
	if n := len(c.corpusOptions(store.WithCheck(nil), nil)); n != 1 {
		t.Errorf("no replica: %d corpus options, want the check alone", n)
	}
	c.ReadDatabaseURL = "postgres://queryd@standby.example/strata"
	if n := len(c.corpusOptions(store.WithCheck(nil), nil)); n != 2 {
		t.Errorf("a replica: %d corpus options, want the check and the replica's", n)
	}
}

// TestReadReplicaDown: QUERYD_READ_DATABASE_URL names a replica nothing
// answers at. Without a fallback the read handle fails naming the replica
// and QUERYD_READ_FALLBACK; with QUERYD_READ_FALLBACK=primary it reads
// from QUERYD_DATABASE_URL. (e2e/scale does the same on a real standby.)
func TestReadReplicaDown(t *testing.T) {
	pool, owner := dbtest.NewPool(t)
	ingesttest.Migrate(t, pool)
	primary := dbtest.QuerydURL(t, owner)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	u, _ := url.Parse(primary)
	u.Host = dead
	env := map[string]string{"QUERYD_DATABASE_URL": primary, "QUERYD_READ_DATABASE_URL": u.String()}
	ctx := context.Background()

	cfg, err := load(env)
	if err != nil {
		t.Fatal(err)
	}
	c, err := store.NewCorpus(cfg.ReadDatabaseURL, cfg.corpusOptions(store.WithCheck(roleCheck(false, nil)), nil)...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Layers(ctx); err == nil || !strings.Contains(err.Error(), store.MsgReplicaUnreachable) || !store.IsUnreachable(err) {
		t.Errorf("replica down, no fallback: %v; want %q", err, store.MsgReplicaUnreachable)
	}

	env["QUERYD_READ_FALLBACK"] = "primary"
	cfg, err = load(env)
	if err != nil {
		t.Fatal(err)
	}
	var notes []error
	c2, err := store.NewCorpus(cfg.ReadDatabaseURL, append(cfg.corpusOptions(store.WithCheck(roleCheck(false, nil)), nil),
		store.WithReadReplica(cfg.DatabaseURL, true, func(err error) { notes = append(notes, err) }))...)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	for range 3 {
		if _, err := c2.Layers(ctx); err != nil {
			t.Fatalf("replica down, QUERYD_READ_FALLBACK=primary: %v", err)
		}
	}
	if err := c2.Ping(ctx); err != nil {
		t.Errorf("Ping with the fallback: %v", err)
	}
	if len(notes) != 1 || notes[0] == nil {
		t.Errorf("notes: %v, want one, with the replica's error", notes)
	}
}
