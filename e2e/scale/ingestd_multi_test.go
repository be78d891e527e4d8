package scale

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/testenv"
)

// multiFiles is the size of the folder the multi-process ingest reads.
const multiFiles = 36

// writeFolder writes multiFiles markdown files, each a few chunks long.
func writeFolder(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for i := range multiFiles {
		var b strings.Builder
		fmt.Fprintf(&b, "# Procedure %d\n\n", i)
		for p := range 4 {
			fmt.Fprintf(&b, "## Step %d\n\nStep %d of procedure %d: the operator checks valve %d-%d, writes the pressure "+
				"in the log and waits for the second operator to confirm the reading before the line is opened again. "+
				"Deviations above %d percent are reported to the shift lead of site %d on the same day.\n\n", p, p, i, i, p, p+3, i)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("proc-%02d.md", i)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The namespaces' processes run as root and read it; the folder is the
	// test's own.
	return dir
}

// onHost is the owner's URL as a process on h reaches the cluster: through
// a forwarder on h's gateway address (loopback: the URL itself).
func onHost(t *testing.T, h host, owner string) string {
	t.Helper()
	if h.ns == "" {
		return owner
	}
	u, err := url.Parse(owner)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = forward(t, net.JoinHostPort(h.gateway, "0"), u.Host)
	return u.String()
}

// TestTwoIngestdServeOneQueue: two `ingestd serve` on one queue, each on a
// host of its own; one is killed with SIGKILL mid-ingest, the other
// finishes. Every file is stored once, and the end state (documents,
// chunks, vectors) hashes the same as a single process's ingest of the
// folder (issue 30, item 3).
func TestTwoIngestdServeOneQueue(t *testing.T) {
	bin := binaries(t)
	dir := writeFolder(t)
	owner := dbtest.NewDatabase(t)
	hosts := newHosts(t, 2)
	var serves []*proc
	for i, h := range hosts {
		emb := fakeEmbedder(t, net.JoinHostPort(h.gateway, "0"), 40*time.Millisecond)
		env := append(append(baseEnv(), "DATABASE_URL="+onHost(t, h, owner), "INGEST_WORKERS=2"), embedEnv(emb)...)
		if i == 0 {
			migrate(t, bin, env)
		}
		serves = append(serves, start(t, "ingestd serve on "+h.name, env, h.prefix(filepath.Join(bin, "ingestd"), "serve")...))
	}
	emb := fakeEmbedder(t, "127.0.0.1:0", 40*time.Millisecond)
	loop := append(append(baseEnv(), "DATABASE_URL="+owner, "INGEST_WORKERS=2"), embedEnv(emb)...)
	runIngestd(t, bin, loop, "add", dir, "--layer", "ops") // queued: the serves work it

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	db, err := pgx.Connect(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	killAt := waitFor(t, 30*time.Second, "both serves at work", func() bool {
		var docs, workers int
		_ = db.QueryRow(ctx, `SELECT (SELECT count(*) FROM strata.documents),
			(SELECT count(DISTINCT attempted_by[array_length(attempted_by, 1)]) FROM river.river_job WHERE state IN ('running', 'completed'))`).Scan(&docs, &workers)
		return docs >= multiFiles/4 && workers >= 2
	})
	serves[0].kill(t)
	var docs int
	_ = db.QueryRow(ctx, `SELECT count(*) FROM strata.documents`).Scan(&docs)
	t.Logf("killed the serve on %s (SIGKILL) %s into the ingest, with %d of %d files stored", hosts[0].name, killAt.Round(time.Millisecond), docs, multiFiles)

	finished := waitFor(t, 60*time.Second, "the other serve finishing the run and the vectors", func() bool {
		var status string
		var pending int
		_ = db.QueryRow(ctx, `SELECT (SELECT status FROM strata.ingest_runs ORDER BY id DESC LIMIT 1),
			(SELECT count(*) FROM strata.chunks c WHERE NOT EXISTS (SELECT 1 FROM strata.embeddings e
				WHERE e.model = $1 AND e.content_hash = c.content_hash))`, fakeModel).Scan(&status, &pending)
		return status == "done" && pending == 0
	})
	t.Logf("the serve on %s finished %s after the kill", hosts[1].name, finished.Round(time.Millisecond))
	storedOnce(t, db)

	single := dbtest.NewDatabase(t)
	one := append(append(baseEnv(), "DATABASE_URL="+single, "INGEST_WORKERS=2"), embedEnv(emb)...)
	runIngestd(t, bin, one, "add", dir, "--layer", "ops", "--wait")
	sc, err := pgx.Connect(ctx, single)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close(context.Background())
	multi, alone := endState(t, db), endState(t, sc)
	if multi != alone {
		t.Errorf("end state after the kill differs from a single process's ingest:\n two serves: %s\n one process: %s", multi, alone)
	}
	t.Logf("end state, both: %s", multi)
}

func migrate(t *testing.T, bin string, env []string) {
	t.Helper()
	runIngestd(t, bin, env, "migrate")
}

func runIngestd(t *testing.T, bin string, env []string, args ...string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, "ingestd"), args...)
	cmd.Dir, cmd.Env = testenv.RepoRoot(t), env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ingestd %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// storedOnce checks that each file of the folder is one document of the
// run, with one record in the run, and no chunk twice.
func storedOnce(t *testing.T, db *pgx.Conn) {
	t.Helper()
	ctx := context.Background()
	var docs, paths, files, dupChunks, okFiles int
	err := db.QueryRow(ctx, `SELECT (SELECT count(*) FROM strata.documents WHERE status = 'ok'),
		(SELECT count(DISTINCT path) FROM strata.documents),
		(SELECT count(*) FROM strata.ingest_files),
		(SELECT count(*) FROM (SELECT 1 FROM strata.chunks GROUP BY document_id, ord HAVING count(*) > 1) d),
		(SELECT count(DISTINCT path) FROM strata.ingest_files)`).Scan(&docs, &paths, &files, &dupChunks, &okFiles)
	if err != nil {
		t.Fatal(err)
	}
	if docs != multiFiles || paths != multiFiles || files != multiFiles || okFiles != multiFiles || dupChunks != 0 {
		t.Errorf("after the kill: %d documents ok, %d paths, %d file records for %d distinct paths, %d chunks twice; want %d, %d, %d, %d, 0",
			docs, paths, files, okFiles, dupChunks, multiFiles, multiFiles, multiFiles, multiFiles)
	}
}

// endState is a hash of what the ingest stored, free of ids and times:
// each document (path, hash, title, body), each chunk (its document's
// path, place, text, hash, clause, metadata) and each vector of the fake
// model, with the counts.
func endState(t *testing.T, db *pgx.Conn) string {
	t.Helper()
	var s string
	err := db.QueryRow(context.Background(), `SELECT
		(SELECT count(*) FROM strata.documents) || ' documents ' ||
		(SELECT count(*) FROM strata.chunks) || ' chunks ' ||
		(SELECT count(*) FROM strata.embeddings WHERE model = $1) || ' vectors; documents ' ||
		(SELECT md5(coalesce(string_agg(concat_ws('|', path, encode(sha256, 'hex'), status, title, md5(body), format, chunker_version), E'\n' ORDER BY path), ''))
			FROM strata.documents) || ' chunks ' ||
		(SELECT md5(coalesce(string_agg(concat_ws('|', d.path, c.ord, c.start_off, c.end_off, c.line_start, c.line_end, c.clause_path,
				md5(c.text), encode(c.content_hash, 'hex'), c.metadata::text), E'\n' ORDER BY d.path, c.ord), ''))
			FROM strata.chunks c JOIN strata.documents d ON d.id = c.document_id) || ' vectors ' ||
		(SELECT md5(coalesce(string_agg(concat_ws('|', encode(content_hash, 'hex'), window_no, embedding::text), E'\n'
				ORDER BY content_hash, window_no), ''))
			FROM strata.embeddings WHERE model = $1)`, fakeModel).Scan(&s)
	if err != nil {
		t.Fatalf("end state: %v", err)
	}
	return s
}
