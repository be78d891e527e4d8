package server

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stratakb/stratakb/queryd/internal/qerr"
	"github.com/stratakb/stratakb/queryd/internal/verify"
)

// receiptsByID answers GetReceipt from a map, the transport's view of the
// verifier; the verifier itself is tested against PostgreSQL in package
// verify.
type receiptsByID map[string]*verify.ReceiptResponse

func (m receiptsByID) Verify(context.Context, verify.Request) (*verify.Response, error) {
	return nil, qerr.Invalidf("draft", "not served in this test")
}

func (m receiptsByID) GetReceipt(_ context.Context, req verify.ReceiptRequest) (*verify.ReceiptResponse, error) {
	if r, ok := m[req.ReceiptID]; ok {
		return r, nil
	}
	return nil, qerr.NotFoundf("no receipt %s", req.ReceiptID)
}

// TestReceiptByPath: GET /v1/receipts/{id} opens a receipt through
// strata_get_receipt's call path, with its errors and its token rule.
func TestReceiptByPath(t *testing.T) {
	t.Parallel()
	id := "rcpt_0123456789abcdef0123456789abcdef"
	ts := newTestServer(t, func(_ *Config, d *Deps) {
		d.Verifier = receiptsByID{id: {ReceiptID: id, Tool: "strata_verify", Status: "verified", Draft: "It is 30 days [S1].", Checked: 1}}
	})
	r := do(t, http.MethodGet, ts.url+"/v1/receipts/"+id, readerToken, nil, nil)
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	var got verify.ReceiptResponse
	if err := json.Unmarshal(r.body, &got); err != nil || got.ReceiptID != id || got.Status != "verified" || got.Draft != "It is 30 days [S1]." {
		t.Fatalf("receipt %s (%v)", r.body, err)
	}
	post := post(t, ts.url+"/v1/receipt", readerToken, `{"receipt_id": "`+id+`"}`)
	if post.status != http.StatusOK || string(post.body) != string(r.body) {
		t.Errorf("POST /v1/receipt gave %d %s, GET gave %s", post.status, post.body, r.body)
	}
	for _, c := range []struct {
		path, token string
		status      int
		code        string
	}{
		{"/v1/receipts/rcpt_ffffffffffffffffffffffffffffffff", readerToken, http.StatusNotFound, "not_found"},
		{"/v1/receipts/not-a-receipt", readerToken, http.StatusBadRequest, "invalid_argument"},
		{"/v1/receipts/" + id, "", http.StatusUnauthorized, "unauthorized"},
	} {
		r := do(t, http.MethodGet, ts.url+c.path, c.token, nil, nil)
		if r.status != c.status || r.errorBody(t).Code != c.code {
			t.Errorf("GET %s: %d %s, want %d %s", c.path, r.status, r.body, c.status, c.code)
		}
	}
}
