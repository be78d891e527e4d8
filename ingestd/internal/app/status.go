package app

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stratakb/stratakb/jobs"
	"github.com/stratakb/stratakb/schema"
)

func (e *env) status(ctx context.Context, args []string) error {
	fs := newFlagSet("status", e.stderr)
	name := layerFlag(fs, "show this layer's files")
	failedOnly := fs.Bool("failed", false, "list only failed and skipped files and warnings")
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("status takes no arguments besides flags")
	}
	if err := checkLayerName("status", *name); err != nil {
		return err
	}
	if err := e.connect(ctx); err != nil {
		return err
	}
	defer e.close()
	rows, err := e.pool.Query(ctx, `
		SELECT l.id, l.name, l.root, l.pushed,
			(SELECT count(*) FROM strata.documents d WHERE d.layer_id = l.id AND d.status = 'ok'),
			(SELECT count(*) FROM strata.documents d WHERE d.layer_id = l.id AND d.status = 'failed'),
			(SELECT count(*) FROM strata.chunks c WHERE c.layer_id = l.id),
			coalesce((SELECT string_agg(lm.model || ' ' || (SELECT count(*) FROM strata.chunks c WHERE c.layer_id = l.id
				AND `+jobs.LacksVector("lm.model")+`)
				|| ' pending', ', ' ORDER BY lm.model) FROM strata.layer_models lm WHERE lm.layer_id = l.id),
				'all pending: no model has run'),
			r.id, r.status, r.started_at, coalesce(r.error, '')
		FROM strata.layers l
		LEFT JOIN LATERAL (SELECT * FROM strata.ingest_runs r WHERE r.layer_id = l.id ORDER BY r.id DESC LIMIT 1) r ON true
		WHERE ($1 = '' OR l.name = $1) ORDER BY l.name`, *name)
	if err != nil {
		return fmt.Errorf("read layers: %w", err)
	}
	type layerRow struct {
		id                  int64
		name, root, vectors string
		pushed              bool
		ok, bad, chunks     int
		runID               *int64
		runStatus           *schema.RunStatus
		runError            *string
		started             *time.Time
	}
	layers, err := pgx.CollectRows(rows, func(cr pgx.CollectableRow) (layerRow, error) {
		var r layerRow
		err := cr.Scan(&r.id, &r.name, &r.root, &r.pushed, &r.ok, &r.bad, &r.chunks, &r.vectors,
			&r.runID, &r.runStatus, &r.started, &r.runError)
		return r, err
	})
	if err != nil {
		return fmt.Errorf("read layers: %w", err)
	}
	orphanEmbeds, err := jobs.OrphanedEmbedJobs(ctx, e.pool)
	if err != nil {
		return err
	}
	rates, err := embedRates(ctx, e.pool, *name)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LAYER\tDOCUMENTS\tFAILED\tCHUNKS\tVECTORS\tLAST RUN\tFOLDER")
	var notes []string
	for _, r := range layers {
		last := "never"
		if r.runID != nil {
			// A run's stored status is written by the process working it; a
			// killed process leaves "running" behind, so an unfinished run
			// is judged by its jobs and their workers.
			state, detail := string(*r.runStatus), ""
			switch *r.runStatus {
			case schema.RunFailed:
				detail = *r.runError
			case schema.RunWalking, schema.RunRunning:
				lv, err := jobs.Liveness(ctx, e.pool, *r.runID)
				if err != nil {
					return err
				}
				state, detail = lv.Describe(state)
			}
			last = state + " " + r.started.UTC().Format("2006-01-02 15:04:05")
			if detail != "" {
				notes = append(notes, fmt.Sprintf("%s: run %d %s: %s", r.name, *r.runID, state, detail))
			}
		}
		if since, ok := orphanEmbeds[r.id]; ok {
			notes = append(notes, fmt.Sprintf("%s: embedding interrupted: its worker is gone since %s; "+
				"'ingestd serve' or the next run with --wait takes it over", r.name, since.UTC().Format("2006-01-02 15:04:05 UTC")))
		}
		for _, er := range rates[r.id] {
			notes = append(notes, er.note(r.name))
		}
		root := r.root
		if r.pushed {
			root += " (pushed: the schedule skips it)"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%s\n", r.name, r.ok, r.bad, r.chunks, r.vectors, last, root)
	}
	tw.Flush()
	for _, n := range notes {
		fmt.Fprintln(e.stdout, n)
	}
	if len(layers) == 0 {
		if *name != "" {
			return usagef("status: no layer named %q", *name)
		}
		fmt.Fprintln(e.stdout, "no layers yet: add one with 'ingestd add DIR --layer NAME'")
		return nil
	}
	if err := e.skipNotes(ctx, *name); err != nil {
		return err
	}
	if *name == "" && !*failedOnly {
		return nil
	}
	return e.fileStatus(ctx, *name, *failedOnly)
}

// fileStatus lists documents with their state, warnings and errors.
func (e *env) fileStatus(ctx context.Context, layer string, failedOnly bool) error {
	rows, err := e.pool.Query(ctx, `
		SELECT l.name, d.path, d.status, coalesce(d.error, ''), d.warnings,
			(SELECT count(*) FROM strata.chunks c WHERE c.document_id = d.id), d.parsed_at
		FROM strata.documents d JOIN strata.layers l ON l.id = d.layer_id
		WHERE ($1 = '' OR l.name = $1) AND (NOT $2 OR d.status = 'failed' OR cardinality(d.warnings) > 0)
		ORDER BY l.name, d.path`, layer, failedOnly)
	if err != nil {
		return fmt.Errorf("read documents: %w", err)
	}
	fmt.Fprintln(e.stdout)
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LAYER\tFILE\tSTATUS\tCHUNKS\tPARSED\tDETAIL")
	var ln, path, status, errText string
	var warnings []string
	var chunks int
	var parsed time.Time
	if _, err := pgx.ForEachRow(rows, []any{&ln, &path, &status, &errText, &warnings, &chunks, &parsed}, func() error {
		detail := errText
		for _, w := range warnings {
			if detail != "" {
				detail += "; "
			}
			detail += "warning: " + w
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", ln, path, status, chunks, parsed.UTC().Format("2006-01-02 15:04"), detail)
		return nil
	}); err != nil {
		return fmt.Errorf("read documents: %w", err)
	}
	tw.Flush()
	// Files the last run skipped never became documents: show them too.
	skipped, err := e.pool.Query(ctx, `
		SELECT l.name, f.path, coalesce(f.error, '')
		FROM strata.layers l
		JOIN LATERAL (SELECT id FROM strata.ingest_runs r WHERE r.layer_id = l.id ORDER BY id DESC LIMIT 1) r ON true
		JOIN strata.ingest_files f ON f.run_id = r.id AND f.status = 'skipped'
		WHERE ($1 = '' OR l.name = $1) ORDER BY l.name, f.path`, layer)
	if err != nil {
		return fmt.Errorf("read skipped files: %w", err)
	}
	var why string
	if _, err := pgx.ForEachRow(skipped, []any{&ln, &path, &why}, func() error {
		fmt.Fprintf(e.stdout, "skipped %s/%s: %s\n", ln, path, why)
		return nil
	}); err != nil {
		return fmt.Errorf("read skipped files: %w", err)
	}
	return nil
}

// skipNotes says, under the layer table, which layers' last run skipped
// files, so that a layer whose files were all skipped does not pass for an
// empty but healthy one.
func (e *env) skipNotes(ctx context.Context, layer string) error {
	rows, err := e.pool.Query(ctx, `
		SELECT l.name, count(*),
			(SELECT count(*) FROM strata.documents d WHERE d.layer_id = l.id AND d.status = 'ok')
		FROM strata.layers l
		JOIN LATERAL (SELECT id FROM strata.ingest_runs r WHERE r.layer_id = l.id ORDER BY id DESC LIMIT 1) r ON true
		JOIN strata.ingest_files f ON f.run_id = r.id AND f.status = 'skipped'
		WHERE ($1 = '' OR l.name = $1)
		GROUP BY l.id, l.name ORDER BY l.name`, layer)
	if err != nil {
		return fmt.Errorf("read skipped files: %w", err)
	}
	var ln string
	var skipped, docs int
	if _, err := pgx.ForEachRow(rows, []any{&ln, &skipped, &docs}, func() error {
		if docs == 0 {
			fmt.Fprintf(e.stdout, "layer %s has no documents: its last run skipped %d files ('ingestd status --layer %s --failed' says why)\n", ln, skipped, ln)
			return nil
		}
		fmt.Fprintf(e.stdout, "layer %s: its last run skipped %d files ('ingestd status --layer %s --failed' says why)\n", ln, skipped, ln)
		return nil
	}); err != nil {
		return fmt.Errorf("read skipped files: %w", err)
	}
	return nil
}

func (e *env) serve(ctx context.Context, args []string) error {
	fs := newFlagSet("serve", e.stderr)
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("serve takes no arguments")
	}
	if err := e.connect(ctx); err != nil {
		return err
	}
	defer e.close()
	cc := e.clientConfig(ctx, e.cfg.Workers)
	cc.Logger = e.logger
	cc.Schedule = e.cfg.Schedule
	// Registering takes over the jobs a killed process left running.
	pres, err := jobs.Register(ctx, e.pool, e.logger)
	if err != nil {
		return err
	}
	defer pres.Close(ctx)
	cc.ID = pres.ClientID
	client, err := jobs.NewClient(e.pool, cc)
	if err != nil {
		return err
	}
	if err := client.Start(ctx); err != nil {
		return fmt.Errorf("start workers: %w", err)
	}
	if cc.Vectorizer != nil {
		// Fill in vectors left pending while the model was unavailable, or
		// re-embed every layer after a model change.
		n, err := jobs.EnqueuePending(ctx, e.pool, client, cc.Vectorizer.Model().Name)
		if err != nil {
			return err
		}
		if n > 0 {
			e.logger.Info("embedding pending chunks", "layers", n, "model", cc.Vectorizer.Model().Name)
		}
	}
	schedule := "none (INGEST_SCHEDULE unset)"
	if e.cfg.Schedule != nil {
		schedule = e.cfg.Schedule.String()
	}
	e.logger.Info("ingestd serving", "workers", e.cfg.Workers, "reingest", schedule)
	<-ctx.Done()
	e.logger.Info("ingestd stopping: finishing running jobs")
	stopClient(client)
	return nil
}

// embedRate is how a layer's embedding with one model goes: chunks left,
// and the chunks that got a vector in the last rateWindow.
type embedRate struct {
	model   string
	pending int
	recent  int
	span    time.Duration // from the oldest of those vectors to now
}

// rateWindow is how far back status looks to measure the embedding rate.
const rateWindow = time.Minute

// note is status's line about it: "ops: embedding with M: 2400 chunks left,
// 19.5 chunks/s, about 2m3s left".
func (r embedRate) note(layer string) string {
	line := fmt.Sprintf("%s: embedding with %s: %d chunks left", layer, r.model, r.pending)
	if r.recent == 0 {
		return line + fmt.Sprintf(", no vector stored in the last %s", rateWindow)
	}
	return line + rateETA(float64(r.recent), max(r.span, time.Second), r.pending)
}

// embedRates reads, per layer (of name, or all when it is ""), each model
// with chunks still pending and how many of the layer's chunks got a
// vector of it in the last rateWindow.
func embedRates(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, name string) (map[int64][]embedRate, error) {
	rows, err := q.Query(ctx, `
		SELECT l.id, lm.model, p.pending, coalesce(r.recent, 0), coalesce(r.span, 0)
		FROM strata.layers l JOIN strata.layer_models lm ON lm.layer_id = l.id
		CROSS JOIN LATERAL (SELECT count(*) AS pending FROM strata.chunks c
			WHERE c.layer_id = l.id AND `+jobs.LacksVector("lm.model")+`) p
		LEFT JOIN LATERAL (SELECT count(DISTINCT c.content_hash) AS recent,
				extract(epoch FROM now() - min(e.created_at))::float8 AS span
			FROM strata.chunks c JOIN strata.embeddings e ON e.model = lm.model AND e.content_hash = c.content_hash
				AND e.window_no = 0
			WHERE c.layer_id = l.id AND e.created_at > now() - make_interval(secs => $2)) r ON true
		WHERE ($1 = '' OR l.name = $1) AND p.pending > 0
		ORDER BY l.id, lm.model`, name, rateWindow.Seconds())
	if err != nil {
		return nil, fmt.Errorf("read embedding rates: %w", err)
	}
	out := map[int64][]embedRate{}
	var id int64
	var r embedRate
	var span float64
	if _, err := pgx.ForEachRow(rows, []any{&id, &r.model, &r.pending, &r.recent, &span}, func() error {
		r.span = time.Duration(span * float64(time.Second))
		out[id] = append(out[id], r)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read embedding rates: %w", err)
	}
	return out, nil
}
