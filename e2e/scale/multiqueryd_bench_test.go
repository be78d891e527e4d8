package scale

import (
	"fmt"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratakb/stratakb/internal/rrproxy"
)

// mqClients is how many clients search at once in BenchmarkMultiQueryd.
const mqClients = 8

// BenchmarkMultiQueryd measures searches per second and their latency
// (p50, p95) with 8 clients searching at once through the round-robin proxy
// in front of 1, 2 and 3 `queryd serve` processes on one database (issue
// 30, item 2). Every query is new, so no process answers from its cache:
// each search embeds its query with the local model and reads PostgreSQL.
// MULTIQUERYD_BENCH_SECONDS sets how long each load runs (default 5).
// Processes share the machine's cores: where the searches already use
// every core, more processes add no throughput (docs/scale.md).
func BenchmarkMultiQueryd(b *testing.B) {
	c := mqNewCluster(b, 3)
	dur := 5 * time.Second
	if s, err := strconv.Atoi(os.Getenv("MULTIQUERYD_BENCH_SECONDS")); err == nil && s > 0 {
		dur = time.Duration(s) * time.Second
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: mqClients}}
	// Load the model in each process before measuring: it is loaded on
	// the first query that needs a vector.
	for _, be := range c.backends {
		mqCall(b, client, be, "/v1/search", map[string]any{"query": mqNextQuery(), "layers": []string{mqLayer}})
	}
	b.Logf("%d CPUs; %d clients; %s per load", runtime.NumCPU(), mqClients, dur)
	for n := 1; n <= len(c.backends); n++ {
		b.Run(fmt.Sprintf("procs=%d", n), func(b *testing.B) {
			p := rrproxy.New(b, false, c.backends[:n]...)
			var r mqLoadResult
			var busy float64
			var cpuPer float64
			for b.Loop() {
				cpu0, q0 := mqCPUTimes(), mqProcCPU(c.pids)
				r = mqLoad(b, client, p.URL, dur)
				busy = mqBusy(cpu0, mqCPUTimes())
				cpuPer = (mqProcCPU(c.pids) - q0).Seconds() * 1000 / float64(max(r.n, 1))
			}
			b.ReportMetric(r.perSecond, "searches/s")
			b.ReportMetric(r.p50, "p50_ms")
			b.ReportMetric(r.p95, "p95_ms")
			b.ReportMetric(busy, "cpu_busy_%")
			b.ReportMetric(cpuPer, "queryd_cpu_ms/search")
			b.Logf("procs=%d: %d searches in %s, %.1f/s, p50 %.0f ms, p95 %.0f ms; queryd CPU %.1f ms a search; the machine's CPUs %.0f%% busy (every process on it)",
				n, r.n, dur, r.perSecond, r.p50, r.p95, cpuPer, busy)
		})
	}
}

type mqLoadResult struct {
	n         int
	perSecond float64
	p50, p95  float64 // milliseconds
}

// mqLoad runs mqClients clients, each searching one new query after
// another, for dur; a failed search fails the benchmark.
func mqLoad(b *testing.B, client *http.Client, base string, dur time.Duration) mqLoadResult {
	var mu sync.Mutex
	var lat []time.Duration
	var failed atomic.Value
	stop := time.Now().Add(dur)
	var wg sync.WaitGroup
	for range mqClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				t0 := time.Now()
				status, body, err := mqSend(client, base, "/v1/search", map[string]any{"query": mqNextQuery(), "layers": []string{mqLayer}})
				d := time.Since(t0)
				if err != nil || status != http.StatusOK {
					failed.CompareAndSwap(nil, fmt.Sprintf("status %d, %v: %s", status, err, body))
					return
				}
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if f := failed.Load(); f != nil {
		b.Fatalf("a search failed under load: %s", f)
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	return mqLoadResult{n: len(lat), perSecond: float64(len(lat)) / dur.Seconds(), p50: pct(0.50), p95: pct(0.95)}
}

// Words that make each benchmark query new: 6 × 20 × 20 × 20 queries.
var (
	mqBase = []string{"How many unused leave days can be carried over?", "What is the notice period?",
		"Who approves expenses?", "How is overtime paid?", "When are salaries paid?", "What happens on sick leave?"}
	mqWords = []string{"annual", "manager", "employee", "policy", "days", "request", "payment", "holiday", "contract", "approval",
		"team", "office", "travel", "report", "year", "month", "week", "training", "remote", "benefit"}
	mqSeq atomic.Int64
)

func mqNextQuery() string {
	i := int(mqSeq.Add(1))
	w := len(mqWords)
	return fmt.Sprintf("%s %s %s %s", mqBase[i%len(mqBase)], mqWords[(i/len(mqBase))%w],
		mqWords[(i/len(mqBase)/w)%w], mqWords[(i/len(mqBase)/w/w)%w])
}

// mqCPUTimes reads the machine's CPU time from /proc/stat: busy and total
// jiffies (nil where there is no /proc).
func mqCPUTimes() []uint64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return nil
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return nil
	}
	var busy, total uint64
	for i, v := range f[1:] {
		n, _ := strconv.ParseUint(v, 10, 64)
		total += n
		if i != 3 && i != 4 { // idle and iowait
			busy += n
		}
	}
	return []uint64{busy, total}
}

// mqBusy is the percentage of the machine's CPU time spent busy between
// two mqCPUTimes.
func mqBusy(a, b []uint64) float64 {
	if a == nil || b == nil || b[1] <= a[1] {
		return 0
	}
	return 100 * float64(b[0]-a[0]) / float64(b[1]-a[1])
}

// mqProcCPU is the CPU time (user and system) the processes used so far,
// from /proc/PID/stat (0 where there is no /proc).
func mqProcCPU(pids []int) time.Duration {
	var ticks uint64
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// The fields after the command name, which is in parentheses:
		// utime and stime are the 12th and 13th of them.
		_, rest, _ := strings.Cut(string(b), ") ")
		f := strings.Fields(rest)
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseUint(f[11], 10, 64)
		s, _ := strconv.ParseUint(f[12], 10, 64)
		ticks += u + s
	}
	return time.Duration(ticks) * time.Second / mqClockTicks
}

// mqClockTicks is USER_HZ, the unit of /proc/PID/stat's times: 100 on
// Linux everywhere Go runs.
const mqClockTicks = 100
