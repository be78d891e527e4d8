package scale

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/replicatest"
	"github.com/stratakb/stratakb/internal/testenv"
)

// replicaEnv is a database on the test cluster with the handbook
// ingested, a hot standby of the cluster, and the fake embedder.
type replicaEnv struct {
	bin, owner, embed string
	querydPrimary     string // the queryd role on the primary
	querydStandby     string // the queryd role on the standby
	standby           *replicatest.Standby
}

func newReplicaEnv(t *testing.T) *replicaEnv {
	t.Helper()
	e := &replicaEnv{bin: binaries(t), owner: dbtest.NewDatabase(t), embed: fakeEmbedder(t, "127.0.0.1:0", 0)}
	e.ingest(t, "fixtures/handbook", "handbook")
	e.standby = replicatest.Start(t)
	e.querydPrimary = dbtest.QuerydURL(t, e.owner)
	e.querydStandby = e.standby.URL(t, e.querydPrimary)
	e.standby.WaitReplayed(t, 30*time.Second)
	return e
}

// ingest runs `ingestd add DIR --layer LAYER --wait` on the primary.
func (e *replicaEnv) ingest(t *testing.T, dir, layer string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(e.bin, "ingestd"), "add", dir, "--layer", layer, "--wait")
	cmd.Dir = testenv.RepoRoot(t)
	cmd.Env = append(append(baseEnv(), "DATABASE_URL="+e.owner, "INGEST_WORKERS=2"), embedEnv(e.embed)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ingestd add %s: %v\n%s", dir, err, out)
	}
}

// serve starts queryd serve with QUERYD_DATABASE_URL on the primary and
// QUERYD_READ_DATABASE_URL on the standby, and waits for /healthz.
func (e *replicaEnv) serve(t *testing.T, name string, extra ...string) (string, *proc) {
	t.Helper()
	addr := testenv.FreeAddr(t)
	env := append(append(baseEnv(), "QUERYD_DATABASE_URL="+e.querydPrimary, "QUERYD_READ_DATABASE_URL="+e.querydStandby,
		"QUERYD_ADDR="+addr, "QUERYD_TOKENS=reader:"+scaleToken,
		"QUERYD_RECEIPT_KEY_FILE="+filepath.Join(t.TempDir(), "receipt.key")), embedEnv(e.embed)...)
	p := start(t, name, append(env, extra...), filepath.Join(e.bin, "queryd"), "serve")
	base := "http://" + addr
	waitFor(t, 20*time.Second, name+" /healthz", func() bool {
		status, _ := call(t, base, "/healthz", nil)
		return status == 200
	})
	return base, p
}

type searchResp struct {
	Results []struct {
		Ref  string `json:"ref"`
		File string `json:"file"`
		Text string `json:"text"`
	} `json:"results"`
}

// search posts /v1/search and returns the status, the files found and the
// body.
func search(t *testing.T, base, query, layer string) (int, searchResp, string) {
	t.Helper()
	status, body := call(t, base, "/v1/search", map[string]any{"query": query, "layers": []string{layer}})
	var r searchResp
	if status == 200 {
		if err := json.Unmarshal(body, &r); err != nil {
			t.Fatalf("search answer: %v\n%s", err, body)
		}
	}
	return status, r, string(body)
}

func hasFile(r searchResp, file string) bool {
	for _, h := range r.Results {
		if h.File == file {
			return true
		}
	}
	return false
}

// TestQuerydOnStreamingReplica runs queryd with its reads on a real hot
// standby and its ledger on the primary (issue 30, item 1).
func TestQuerydOnStreamingReplica(t *testing.T) {
	e := newReplicaEnv(t)
	base, _ := e.serve(t, "queryd (no fallback)")
	t.Run("searchable once replayed", func(t *testing.T) { e.searchableOnceReplayed(t, base) })
	t.Run("receipts read from the primary", func(t *testing.T) { e.receiptsReadYourWrites(t, base) })
	t.Run("role rules on the standby", e.roleRules)
	t.Run("standby stopped", func(t *testing.T) { e.standbyStopped(t, base) })
}

// searchableOnceReplayed: a document ingested on the primary is found
// through the standby once replayed; the lag and the time until
// searchable are logged (docs/scale.md).
func (e *replicaEnv) searchableOnceReplayed(t *testing.T, base string) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "fresh.md"), []byte("# Fresh\n\nThe zorblatt reconciliation runs every quarter.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.ingest(t, dir, "fresh")
	ingested := time.Now()
	r := e.standby.WaitReplayed(t, 30*time.Second)
	waitFor(t, 30*time.Second, "the new document searchable on the standby", func() bool {
		status, resp, _ := search(t, base, "zorblatt reconciliation", "fresh")
		return status == 200 && hasFile(resp, "fresh.md")
	})
	t.Logf("replay lag after the ingest: %d bytes, replayed %s after ingestd add returned; searchable through the standby %s after ingestd add returned",
		r.BehindBytes, r.Wait.Round(time.Millisecond), time.Since(ingested).Round(time.Millisecond))
}

// receiptsReadYourWrites: with the standby's replay paused, a receipt
// strata_verify just issued (on the primary) opens at once, by
// strata_get_receipt and by GET /v1/receipts/{id}, though the standby
// does not have it.
func (e *replicaEnv) receiptsReadYourWrites(t *testing.T, base string) {
	status, resp, body := search(t, base, "How many unused leave days can be carried over?", "handbook")
	if status != 200 || len(resp.Results) == 0 {
		t.Fatalf("search: %d %s", status, body)
	}
	e.standby.PauseReplay(t)
	defer e.standby.ResumeReplay(t)
	status, vb := call(t, base, "/v1/verify", map[string]any{
		"draft":    "Up to 5 unused days may be carried into the next calendar year [S1].",
		"passages": []string{resp.Results[0].Ref}})
	var v struct {
		ReceiptID string `json:"receipt_id"`
	}
	if err := json.Unmarshal(vb, &v); status != 200 || err != nil || v.ReceiptID == "" {
		t.Fatalf("verify: %d %v %s", status, err, vb)
	}
	if st, b := call(t, base, "/v1/receipts/"+v.ReceiptID, nil); st != 200 || !strings.Contains(string(b), v.ReceiptID) {
		t.Errorf("GET /v1/receipts/%s right after verify, replay paused: %d %s", v.ReceiptID, st, b)
	}
	if st, b := call(t, base, "/v1/receipt", map[string]string{"receipt_id": v.ReceiptID}); st != 200 || !strings.Contains(string(b), v.ReceiptID) {
		t.Errorf("strata_get_receipt right after verify, replay paused: %d %s", st, b)
	}
	// The standby has not got the receipt: the reads above went to the
	// primary.
	if n := e.countOnStandby(t, "SELECT count(*) FROM strata.receipts WHERE id = $1", v.ReceiptID); n != 0 {
		t.Errorf("the paused standby already has receipt %s: the test proves nothing", v.ReceiptID)
	}
}

// countOnStandby runs a count as the owner on the standby.
func (e *replicaEnv) countOnStandby(t *testing.T, sql string, args ...any) int {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, e.standby.URL(t, e.owner))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var n int
	if err := c.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// roleRules: the queryd role's rules hold on the standby. queryd's role
// check passed there (the searches above read from it); the standby
// refuses the role's writes; and queryd refuses to read from it as the
// owner, as it does on the primary.
func (e *replicaEnv) roleRules(t *testing.T) {
	ctx := context.Background()
	c, err := pgx.Connect(ctx, e.querydStandby)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, "INSERT INTO strata.interactions (caller, tool, question, layers, status) VALUES ('x', 'strata_search', 'q', '{}', 'ok')")
	if err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("an insert as queryd on the standby: %v, want a read-only refusal", err)
	}
	_, err = c.Exec(ctx, "DELETE FROM strata.documents")
	if err == nil {
		t.Errorf("a delete as queryd on the standby succeeded")
	}
	cmd := exec.Command(filepath.Join(e.bin, "queryd"), "search", "leave", "--layers", "handbook", "--local")
	cmd.Dir = testenv.RepoRoot(t)
	cmd.Env = append(append(baseEnv(), "QUERYD_DATABASE_URL="+e.querydPrimary,
		"QUERYD_READ_DATABASE_URL="+e.standby.URL(t, e.owner)), embedEnv(e.embed)...)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "superuser") {
		t.Errorf("queryd search reading from the standby as the owner: %v\n%s\nwant a refusal naming the superuser", err, out)
	}
}

// standbyStopped: with the standby down, queryd answers searches 503
// naming the read replica, and opens receipts (on the primary) still;
// with QUERYD_READ_FALLBACK=primary searches read from the primary. Both
// go back to the standby when it is up again.
func (e *replicaEnv) standbyStopped(t *testing.T, base string) {
	fbBase, fb := e.serve(t, "queryd (QUERYD_READ_FALLBACK=primary)", "QUERYD_READ_FALLBACK=primary")
	const q, layer = "How many unused leave days can be carried over?", "handbook"
	e.standby.Stop(t)
	down := time.Now()
	waitFor(t, 10*time.Second, "a 503 naming the read replica", func() bool {
		status, _, body := search(t, base, q, layer)
		return status == 503 && strings.Contains(body, "read replica (QUERYD_READ_DATABASE_URL) is unreachable")
	})
	status, _, body := search(t, base, q, layer)
	if status != 503 || !strings.Contains(body, "QUERYD_READ_FALLBACK=primary") {
		t.Errorf("search with the standby down, no fallback: %d %s", status, body)
	}
	if st, b := call(t, base, "/v1/receipts/rcpt_00000000000000000000000000000000", nil); st != 404 {
		t.Errorf("a receipt (read on the primary) with the standby down: %d %s, want 404 for an unknown id", st, b)
	}
	took := waitFor(t, 10*time.Second, "searches on the primary with QUERYD_READ_FALLBACK=primary", func() bool {
		status, resp, _ := search(t, fbBase, q, layer)
		return status == 200 && hasFile(resp, "leave-policy.md")
	})
	t.Logf("with the standby down, QUERYD_READ_FALLBACK=primary answered from the primary %s after the stop", took.Round(time.Millisecond))
	for range 5 {
		if status, _, body := search(t, fbBase, q, layer); status != 200 {
			t.Errorf("search with fallback, standby down: %d %s", status, body)
		}
	}
	// Answering from the primary is a degraded state, and /healthz says so.
	if st, b := call(t, fbBase, "/healthz", nil); st != 200 || !strings.Contains(string(b), `"status":"degraded"`) ||
		!strings.Contains(string(b), `"read_replica"`) {
		t.Errorf("/healthz with the standby down and the fallback on: %d %s, want degraded naming the read replica", st, b)
	}
	e.standby.StartAgain(t)
	t.Logf("standby down for %s", time.Since(down).Round(time.Millisecond))
	back := waitFor(t, 15*time.Second, "searches through the standby again", func() bool {
		status, resp, _ := search(t, base, q, layer)
		return status == 200 && hasFile(resp, "leave-policy.md")
	})
	t.Logf("searches answered again %s after the standby was back", back.Round(time.Millisecond))
	waitFor(t, 15*time.Second, "the fallback queryd back on the standby", func() bool {
		search(t, fbBase, q, layer)
		return strings.Contains(fb.log.String(), "read replica answers again")
	})
}
