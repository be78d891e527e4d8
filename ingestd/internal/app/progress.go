package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/schollz/progressbar/v3"

	"github.com/stratakb/stratakb/jobs"
	"github.com/stratakb/stratakb/schema"
)

// isTerminal reports whether w is a character device (a terminal), where
// progress is drawn as a bar instead of printed as lines.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// waitRun polls a run until it ends, printing progress: a bar on a terminal,
// a line per change otherwise.
func (e *env) waitRun(ctx context.Context, l jobs.Layer, runID int64) (jobs.RunProgress, error) {
	out := &progressLine{w: e.stdout, tty: isTerminal(e.stdout)}
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	var lastAhead time.Time
	waiting := ""
	for {
		p, err := jobs.Progress(ctx, e.pool, runID)
		if err != nil {
			return p, err
		}
		parsing := p.Queued + p.OK + failedParsing(p)
		done := parsing - p.Queued
		var line string
		switch p.Status {
		case schema.RunWalking:
			// Say what the scan waits for when it has not started: jobs
			// ahead of it, perhaps left by a process that was killed.
			if time.Since(lastAhead) >= time.Second {
				lastAhead = time.Now()
				a, err := jobs.Ahead(ctx, e.pool, runID)
				if err != nil {
					return p, err
				}
				waiting = aheadLine(a)
			}
			line = fmt.Sprintf("%s: scanning folder", l.Name)
			if waiting != "" {
				line = fmt.Sprintf("%s: %s", l.Name, waiting)
			}
		case schema.RunFailed:
			line = fmt.Sprintf("%s: stopped", l.Name) // the summary says why
		default:
			line = fmt.Sprintf("%s: %d/%d files parsed", l.Name, done, parsing)
			if p.Failed > 0 {
				line += fmt.Sprintf(", %d failed", p.Failed)
			}
		}
		out.show(bar(done, parsing, 30)+" ", line, p.Done())
		if p.Done() {
			return p, nil
		}
		select {
		case <-ctx.Done():
			out.show("", line, true)
			return p, fmt.Errorf("stopped while waiting for layer %s (run %d goes on with 'ingestd serve'): %w", l.Name, runID, ctx.Err())
		case <-tick.C:
		}
	}
}

// failedParsing counts failures among the files that were sent to parsing
// (new or changed), leaving out unchanged files that failed before.
func failedParsing(p jobs.RunProgress) int {
	n := p.New + p.Changed - p.Queued - p.OK
	if n < 0 {
		return 0
	}
	return n
}

func bar(done, total, width int) string {
	if total <= 0 {
		return "[" + strings.Repeat(" ", width) + "]"
	}
	n := done * width / total
	return "[" + strings.Repeat("#", n) + strings.Repeat(".", width-n) + "]"
}

// summary prints what a run did: counts, then each failure and skip with its
// reason. It reports empty when the run skipped files and the layer is left
// without a single document: a folder of files in formats StrataKB does not
// read is not a clean, empty layer.
func (e *env) summary(ctx context.Context, l jobs.Layer, p jobs.RunProgress) (empty bool, err error) {
	elapsed := time.Since(p.StartedAt)
	if p.FinishedAt != nil {
		elapsed = p.FinishedAt.Sub(p.StartedAt)
	}
	if p.Status == schema.RunFailed {
		fmt.Fprintf(e.stdout, "%s: ingest failed: %s\n", l.Name, p.Error)
		return false, nil
	}
	wait, err := jobs.RunWait(ctx, e.pool, p.RunID)
	if err != nil {
		return false, err
	}
	took := tookLine(elapsed, wait)
	files, err := jobs.RunFiles(ctx, e.pool, p.RunID, false)
	if err != nil {
		return false, err
	}
	if p.Skipped > 0 {
		var docs int
		if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM strata.documents WHERE layer_id = $1 AND status = $2`,
			l.ID, schema.DocOK).Scan(&docs); err != nil {
			return false, fmt.Errorf("count documents of layer %s: %w", l.Name, err)
		}
		empty = docs == 0
		defer func() {
			if empty && err == nil {
				fmt.Fprintf(e.stdout, "%s: no document was ingested: the layer has none, and %d files were skipped\n", l.Name, p.Skipped)
			}
		}()
	}
	added := p.New - countFailed(files, schema.ActionNew)
	changed := p.Changed - countFailed(files, schema.ActionChanged)
	if added == 0 && changed == 0 && p.Deleted == 0 && p.Renamed == 0 && p.Failed == 0 && p.Skipped == 0 {
		fmt.Fprintf(e.stdout, "%s: nothing changed (%d files unchanged)%s\n", l.Name, p.Unchanged, took)
		return false, nil
	}
	fmt.Fprintf(e.stdout, "%s: %d added, %d changed, %d unchanged, %d deleted, %d renamed, %d failed, %d skipped%s\n",
		l.Name, added, changed, p.Unchanged, p.Deleted, p.Renamed, p.Failed, p.Skipped, took)
	shown := 0
	for _, f := range files {
		switch {
		case f.Status == schema.FileFailed && f.Action == schema.ActionUnchanged:
			fmt.Fprintf(e.stdout, "  failed   %s: %s (unchanged since it last failed)\n", f.Path, f.Error)
		case f.Status == schema.FileFailed:
			fmt.Fprintf(e.stdout, "  failed   %s: %s\n", f.Path, f.Error)
		case f.Status == schema.FileSkipped:
			// A folder with thousands of files an --include glob leaves
			// out would drown the rest: the first ones are shown, and
			// status lists them all.
			if shown++; shown <= maxSkippedShown {
				fmt.Fprintf(e.stdout, "  skipped  %s: %s\n", f.Path, f.Error)
			} else if shown == maxSkippedShown+1 {
				fmt.Fprintf(e.stdout, "  skipped  … and %d more ('ingestd status --layer %s --failed' lists them all)\n",
					p.Skipped-maxSkippedShown, l.Name)
			}
		}
		for _, w := range f.Warnings {
			fmt.Fprintf(e.stdout, "  warning  %s: %s\n", f.Path, w)
		}
	}
	return empty, nil
}

// minWaitShown is the least queue wait a summary reports apart.
const minWaitShown = time.Second

// tookLine ends a summary with how long the run took: " in 3s", or, when
// its jobs waited in the queue for other layers' jobs, the wait apart from
// the ingest itself ("; waited 21m0s for other layers' jobs; ingest 3s").
func tookLine(elapsed, wait time.Duration) string {
	if wait < minWaitShown {
		return " in " + round(elapsed).String()
	}
	return fmt.Sprintf("; waited %s for other layers' jobs; ingest %s", round(wait), round(max(elapsed-wait, 0)))
}

// maxSkippedShown bounds the skipped files a summary names one by one.
const maxSkippedShown = 50

func countFailed(files []jobs.FileReport, action schema.FileAction) int {
	n := 0
	for _, f := range files {
		if f.Action == action && f.Status != schema.FileOK {
			n++
		}
	}
	return n
}

func round(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(10 * time.Millisecond)
}

// aheadLine says what a walk that has not started waits for, or "" when it
// is running or about to.
func aheadLine(a jobs.QueueAhead) string {
	if a.WalkState != "available" || a.Running+a.Ahead == 0 {
		return ""
	}
	line := fmt.Sprintf("waiting to scan the folder behind %d jobs (%d running, %d queued ahead)", a.Running+a.Ahead, a.Running, a.Ahead)
	if a.TakenOver > 0 {
		line += fmt.Sprintf("; %d of them were left by a worker gone since %s and are being taken over",
			a.TakenOver, a.GoneSince.UTC().Format("15:04:05 UTC"))
	}
	return line
}

// waitVectors waits until the layer's chunks all have a vector of model, or
// no embedding job for the layer is left to run (it failed: the vectors stay
// pending and 'ingestd status' says so). When chunks are pending and no job
// will embed them (stored while no model was available, before a model
// change, or left by a killed process), it queues a sweep of the layer, once.
func (e *env) waitVectors(ctx context.Context, client *river.Client[pgx.Tx], l jobs.Layer, model string) error {
	out := &progressLine{w: e.stdout, tty: isTerminal(e.stdout)}
	var meter *embedMeter
	// Counting pending vectors reads the layer's chunks: poll less often.
	tick := time.NewTicker(5 * pollEvery)
	defer tick.Stop()
	swept := false
	for {
		pending, err := jobs.PendingVectors(ctx, e.pool, model)
		if err != nil {
			return err
		}
		left := pending[l.ID]
		active, err := jobs.ActiveEmbedJobs(ctx, client, e.pool, l.ID)
		if err != nil {
			return err
		}
		if left > 0 && active == 0 && !swept {
			if _, err := client.Insert(ctx, jobs.EmbedArgs{LayerID: l.ID, Model: model}, nil); err != nil {
				return fmt.Errorf("enqueue embedding of layer %s: %w", l.Name, err)
			}
			swept, active = true, 1
		}
		if meter == nil && left > 0 && active > 0 {
			meter = newEmbedMeter(out, fmt.Sprintf("%s: embedding with %s", l.Name, model), time.Now())
		}
		line := ""
		switch {
		case left == 0:
			line = fmt.Sprintf("%s: every chunk has a vector of %s", l.Name, model)
		case active == 0:
			line = fmt.Sprintf("%s: %d chunks have no vector of %s yet ('ingestd status' shows why; 'ingestd serve' retries)", l.Name, left, model)
		}
		final := left == 0 || active == 0
		if meter != nil {
			meter.update(left, time.Now(), final)
		}
		if line != "" {
			out.show("", line, final)
		}
		if final {
			return nil
		}
		select {
		case <-ctx.Done():
			if meter != nil {
				meter.update(left, time.Now(), true)
			}
			out.show("", fmt.Sprintf("%s: embedding with %s, %d chunks left", l.Name, model, left), true)
			return fmt.Errorf("stopped while embedding layer %s: %w", l.Name, ctx.Err())
		case <-tick.C:
		}
	}
}

// progressLine prints progress: on a terminal it redraws one line on every
// change; to a log it writes a line at most every logEvery, and always the
// final one.
type progressLine struct {
	w       io.Writer
	tty     bool
	last    string
	printed time.Time
	closed  bool
}

// show prints line (with prefix, a bar, on a terminal only); final ends the
// terminal line.
func (p *progressLine) show(prefix, line string, final bool) {
	if p.closed {
		return
	}
	if line != p.last && (p.tty || final || time.Since(p.printed) >= logEvery) {
		if p.tty {
			fmt.Fprintf(p.w, "\r\033[K%s%s", prefix, line)
		} else {
			fmt.Fprintln(p.w, line)
		}
		p.last, p.printed = line, time.Now()
	}
	if final {
		if p.tty {
			fmt.Fprintln(p.w)
		}
		p.closed = true
	}
}

// embedMeter shows a layer's embedding progress: on a terminal a bar with
// the percentage, the rate and the time left (schollz/progressbar); to a
// log a line every logEvery with the same figures.
type embedMeter struct {
	w       io.Writer
	tty     bool
	label   string
	start   time.Time
	first   int // chunks left when the meter started
	total   int // chunks to embed since the meter started, as far as known
	bar     *progressbar.ProgressBar
	printed time.Time
	closed  bool
}

func newEmbedMeter(out *progressLine, label string, now time.Time) *embedMeter {
	return &embedMeter{w: out.w, tty: out.tty, label: label, start: now, first: -1}
}

// update records that left chunks are still without a vector at now; final
// ends the meter (the caller prints the outcome).
func (m *embedMeter) update(left int, now time.Time, final bool) {
	if m.closed {
		return
	}
	if m.first < 0 {
		m.first, m.total = left, left
	}
	// Files parsed meanwhile add chunks: the total grows with them.
	done := m.total - left
	if done < 0 {
		m.total, done = left, 0
	}
	if m.tty {
		m.drawBar(done, final)
	} else if !final && now.Sub(m.printed) >= logEvery {
		fmt.Fprintln(m.w, embedLine(m.label, done, m.total, now.Sub(m.start)))
		m.printed = now
	}
	m.closed = final
}

func (m *embedMeter) drawBar(done int, final bool) {
	if m.bar == nil {
		m.bar = progressbar.NewOptions(m.total,
			progressbar.OptionSetWriter(m.w),
			progressbar.OptionSetDescription(m.label),
			progressbar.OptionSetWidth(30),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("chunks"),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionSetRenderBlankState(true))
	}
	if m.bar.GetMax() != m.total {
		m.bar.ChangeMax(m.total)
	}
	_ = m.bar.Set(done)
	if final {
		fmt.Fprintln(m.w)
	}
}

// embedLine is a log line of embedding progress:
// "ops: embedding with M: 1200/28000 chunks (4%), 19.5 chunks/s, about 22m57s left".
func embedLine(label string, done, total int, elapsed time.Duration) string {
	line := fmt.Sprintf("%s: %d/%d chunks", label, done, total)
	if total > 0 {
		line += fmt.Sprintf(" (%d%%)", done*100/total)
	}
	return line + rateETA(float64(done), elapsed, total-done)
}

// rateETA says how fast n chunks were embedded in elapsed and when left
// more will be done at that rate: ", 19.5 chunks/s, about 22m57s left", or
// "" before there is a rate to tell.
func rateETA(n float64, elapsed time.Duration, left int) string {
	if n <= 0 || elapsed <= 0 {
		return ""
	}
	rate := n / elapsed.Seconds()
	eta := time.Duration(float64(left) / rate * float64(time.Second))
	return fmt.Sprintf(", %.1f chunks/s, about %s left", rate, eta.Round(time.Second))
}
