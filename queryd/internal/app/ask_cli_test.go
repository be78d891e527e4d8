package app

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/internal/ingesttest"
	"github.com/stratakb/stratakb/internal/testenv"
	"github.com/stratakb/stratakb/jobs"
)

// TestAskVerbIssuesAReceipt: `queryd ask` on an extractive layer prints the
// documents' own sentences with a receipt id, which `queryd receipt` then
// shows; the command line still records no interaction.
func TestAskVerbIssuesAReceipt(t *testing.T) {
	ctx := context.Background()
	owner, qurl := asQuerydRole(t)
	root := filepath.Join(t.TempDir(), "rules")
	testenv.WriteFiles(t, root, map[string]string{"leave.md": "# Leave\n\n## 3 Carry-over\n\n" +
		"Up to five unused leave days may be carried into the next calendar year. Days carried over lapse at the end of March.\n"})
	ingesttest.Ingest(t, owner, jobs.Layer{Name: "rules", Root: root, AnswerMode: "extractive"}, ingesttest.Options{})
	env := map[string]string{"QUERYD_DATABASE_URL": qurl, "STRATA_MODEL_DIR": t.TempDir()}
	run := func(args ...string) (string, error) {
		var out, errOut strings.Builder
		err := Run(ctx, args, func(k string) string { return env[k] }, strings.NewReader(""), &out, &errOut)
		if err != nil {
			t.Logf("queryd %s: %s", strings.Join(args, " "), errOut.String())
		}
		return out.String(), err
	}
	out, err := run("ask", "How many unused leave days may be carried into the next calendar year?", "--layers", "rules")
	if err != nil {
		t.Fatalf("ask: %v\n%s", err, out)
	}
	var resp struct {
		Status    string `json:"status"`
		Mode      string `json:"mode"`
		ReceiptID string `json:"receipt_id"`
		Answer    []struct {
			Text string `json:"text"`
		} `json:"answer"`
	}
	if err := json.Unmarshal([]byte(out), &resp); err != nil {
		t.Fatalf("ask's output is not JSON: %v\n%s", err, out)
	}
	if resp.Mode != "extractive" || resp.Status == "not_found" || len(resp.Answer) == 0 {
		t.Fatalf("want an extractive answer, got %s", out)
	}
	if !strings.HasPrefix(resp.ReceiptID, "rcpt_") {
		t.Fatalf("no receipt id in the extractive answer: %s", out)
	}
	shown, err := run("receipt", resp.ReceiptID)
	if err != nil {
		t.Fatalf("receipt %s: %v", resp.ReceiptID, err)
	}
	if !strings.Contains(shown, resp.ReceiptID) || !strings.Contains(shown, "Up to five unused leave days") {
		t.Errorf("queryd receipt %s:\n%s", resp.ReceiptID, shown)
	}
	var interactions int
	if err := owner.QueryRow(ctx, `SELECT count(*) FROM strata.interactions`).Scan(&interactions); err != nil {
		t.Fatal(err)
	}
	if interactions != 0 {
		t.Errorf("the command line recorded %d interactions, want none", interactions)
	}
}
