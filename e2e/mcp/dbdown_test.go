package mcpe2e

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratakb/stratakb/internal/tcpproxy"
)

// The issue: while PostgreSQL was down, queryd made a new connection per
// request, about 5,500 a second under a client that ignores Retry-After.
func TestQuerydBacksOffWhileDatabaseIsDown(t *testing.T) {
	e := setup(t)
	var qurl string
	for _, kv := range e.querydEnv {
		if v, ok := strings.CutPrefix(kv, "QUERYD_DATABASE_URL="); ok {
			qurl = v
		}
	}
	u, err := url.Parse(qurl)
	if err != nil || u.Host == "" {
		t.Fatalf("queryd's database URL %q: %v", qurl, err)
	}
	// The proxy counts the connections queryd opens.
	p := tcpproxy.New(t, u.Host)
	u.Host = p.Addr()
	// PostgreSQL is down when queryd starts.
	p.Set(tcpproxy.AcceptAndClose)
	base, _, _ := e.serveUntil(t, func(int) bool { return true }, "QUERYD_DATABASE_URL="+u.String())

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}, Timeout: 10 * time.Second}
	search := func() (int, string) {
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/search", strings.NewReader(fmt.Sprintf(`{"query":%q,"layers":[%q]}`, query, layer)))
		req.Header.Set("Authorization", "Bearer "+readerToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// hammer searches from eight clients that ignore Retry-After for a
	// second, with the database down.
	hammer := func(when string) {
		t.Helper()
		p.ResetAccepted()
		var n, unreachable atomic.Int64
		var other sync.Map
		var wg sync.WaitGroup
		stop := time.Now().Add(time.Second)
		for range 8 {
			wg.Go(func() {
				for time.Now().Before(stop) {
					status, body := search()
					n.Add(1)
					if status == http.StatusServiceUnavailable && strings.Contains(body, "database is unreachable") {
						unreachable.Add(1)
					} else {
						other.Store(fmt.Sprintf("%d %s", status, body), true)
					}
				}
			})
		}
		wg.Wait()
		dials := p.Accepted()
		t.Logf("database down %s: %d searches in 1 s, %d answered 503 \"database is unreachable\", %d connection attempts",
			when, n.Load(), unreachable.Load(), dials)
		other.Range(func(k, _ any) bool {
			t.Errorf("%s: an answer that does not say the database is unreachable: %.300s", when, k)
			return true
		})
		if dials > 10 {
			t.Errorf("%s: %d searches made %d connection attempts, want a handful", when, n.Load(), dials)
		}
	}
	// backUp waits for searches to work again once the database is back,
	// within the longest backoff.
	backUp := func(when string) {
		t.Helper()
		p.Set(tcpproxy.Forward)
		deadline := time.Now().Add(8 * time.Second)
		for {
			status, body := search()
			if status == 200 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: no recovery once the database was back: %d %s", when, status, body)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	hammer("since start-up")
	backUp("since start-up")
	// PostgreSQL goes away under a running queryd.
	p.Set(tcpproxy.AcceptAndClose)
	hammer("while serving")
	backUp("while serving")
}
