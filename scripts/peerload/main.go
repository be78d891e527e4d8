// Command peerload is the load driver of scripts/bench-peer.sh: it sends
// SciFact claims to StrataKB's queryd serve or to the peer (qmd's HTTP
// server), over REST or MCP (streamable HTTP), from one or more clients, and
// prints the latency percentiles and the rate as one line of key=value
// pairs. With -run
// it writes the answers as a TREC run (a document ranked by its best
// chunk), for the peer harness's evaluator. With -cli it times one new
// process per query instead (the command line's cost).
//
//	peerload -target strata|qmd -url http://127.0.0.1:PORT -mode rest|mcp
//	         -queries test.jsonl [-warmup train.jsonl] [-clients 8] [-top 10]
//	         [-layer scifact] [-run out.trec] [-max N]
//	peerload -cli -queries test.jsonl -max 30 -- COMMAND ARGS...  (the query is appended)
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type config struct {
	target, url, mode, layer, run string
	queries, warmup               string
	clients, top, max, warmN      int
	cli                           bool
	command                       []string
}

type query struct{ id, text string }

type answer struct {
	q    query
	ms   float64
	docs []string
}

func main() {
	cfg := parseFlags()
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "peerload:", err)
		os.Exit(1)
	}
}

func parseFlags() config {
	var c config
	flag.StringVar(&c.target, "target", "strata", "strata or qmd")
	flag.StringVar(&c.url, "url", "", "the server's base URL")
	flag.StringVar(&c.mode, "mode", "rest", "rest or mcp")
	flag.StringVar(&c.layer, "layer", "scifact", "StrataKB layer to search")
	flag.StringVar(&c.run, "run", "", "write a TREC run here")
	flag.StringVar(&c.queries, "queries", "", "JSONL queries {_id, text}")
	flag.StringVar(&c.warmup, "warmup", "", "JSONL queries sent untimed first (not the timed ones: StrataKB caches answers)")
	flag.IntVar(&c.clients, "clients", 1, "concurrent clients")
	flag.IntVar(&c.top, "top", 10, "results per search")
	flag.IntVar(&c.max, "max", 0, "at most this many queries (0: all)")
	flag.IntVar(&c.warmN, "warmup-n", 10, "warm-up queries")
	flag.BoolVar(&c.cli, "cli", false, "time COMMAND QUERY, a new process per query")
	flag.Parse()
	c.command = flag.Args()
	return c
}

func run(c config) error {
	qs, err := readQueries(c.queries, c.max)
	if err != nil {
		return err
	}
	if c.cli {
		return report(c, timeCLI(c.command, qs))
	}
	send, err := newSender(c)
	if err != nil {
		return err
	}
	if c.warmup != "" {
		ws, err := readQueries(c.warmup, c.warmN)
		if err != nil {
			return err
		}
		for _, q := range ws {
			if _, err := send(0, q.text); err != nil {
				return fmt.Errorf("warm-up: %w", err)
			}
		}
	}
	return report(c, drive(send, qs, c.clients))
}

type result struct {
	answers []answer
	wall    time.Duration
	err     error
}

// drive sends every query once, from clients goroutines taking the next
// query in turn, and times each and the whole.
func drive(send sender, qs []query, clients int) result {
	out := make([]answer, len(qs))
	var next atomic.Int64
	var first error
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(qs) {
					return
				}
				t0 := time.Now()
				docs, err := send(c, qs[i].text)
				out[i] = answer{q: qs[i], ms: float64(time.Since(t0).Microseconds()) / 1000, docs: docs}
				if err != nil {
					mu.Lock()
					first = cmpErr(first, fmt.Errorf("query %s: %w", qs[i].id, err))
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return result{answers: out, wall: time.Since(start), err: first}
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// timeCLI runs command + query once per query, one after another.
func timeCLI(command []string, qs []query) result {
	if len(command) == 0 {
		return result{err: errors.New("-cli needs a command after --")}
	}
	var out []answer
	start := time.Now()
	for _, q := range qs {
		t0 := time.Now()
		cmd := exec.Command(command[0], append(slices.Clone(command[1:]), q.text)...)
		if b, err := cmd.CombinedOutput(); err != nil {
			return result{err: fmt.Errorf("query %s: %s: %w: %.300s", q.id, command[0], err, b)}
		}
		out = append(out, answer{q: q, ms: float64(time.Since(t0).Microseconds()) / 1000})
	}
	return result{answers: out, wall: time.Since(start)}
}

// report prints n, p50_ms, p95_ms (nearest rank), per_s (queries over the
// wall time), empty (answers without a document) and writes the run.
func report(c config, r result) error {
	if r.err != nil {
		return r.err
	}
	ms := make([]float64, len(r.answers))
	empty := 0
	for i, a := range r.answers {
		ms[i] = a.ms
		if len(a.docs) == 0 {
			empty++
		}
	}
	slices.Sort(ms)
	fmt.Printf("n=%d p50_ms=%.2f p95_ms=%.2f per_s=%.2f empty=%d clients=%d\n", len(ms), median(ms),
		nearestRank(ms, 95), float64(len(ms))/r.wall.Seconds(), empty, c.clients)
	if c.run == "" {
		return nil
	}
	return writeRun(c.run, c.target+"-"+c.mode, r.answers)
}

func median(s []float64) float64 {
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func nearestRank(s []float64, p float64) float64 {
	if len(s) == 0 {
		return 0
	}
	return s[max(0, int(math.Ceil(p/100*float64(len(s))))-1)]
}

// writeRun writes each query's documents in answer order, each once, with
// score 1000 - rank so that the evaluator keeps that order.
func writeRun(path, tag string, answers []answer) error {
	var b strings.Builder
	for _, a := range answers {
		seen := map[string]bool{}
		rank := 0
		for _, d := range a.docs {
			if seen[d] {
				continue
			}
			seen[d] = true
			rank++
			fmt.Fprintf(&b, "%s Q0 %s %d %d %s\n", a.q.id, d, rank, 1000-rank, tag)
		}
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func readQueries(path string, limit int) ([]query, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("queries: %w", err)
	}
	defer f.Close()
	var out []query
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() && (limit == 0 || len(out) < limit) {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var q struct {
			ID   any    `json:"_id"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, query{id: fmt.Sprint(q.ID), text: q.Text})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no queries", path)
	}
	return out, nil
}
