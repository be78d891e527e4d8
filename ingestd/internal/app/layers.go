package app

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/stratakb/stratakb/jobs"
	"github.com/stratakb/stratakb/schema"
)

// layers is `ingestd layers`: each layer's settings, counts and last run,
// so that ops can see them without SQL.
func (e *env) layers(ctx context.Context, args []string) error {
	fs := newFlagSet("layers", e.stderr)
	name := layerFlag(fs, "show only this layer")
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("layers takes no arguments besides flags")
	}
	if err := checkLayerName("layers", *name); err != nil {
		return err
	}
	if err := e.connect(ctx); err != nil {
		return err
	}
	defer e.close()
	infos, err := jobs.DescribeLayers(ctx, e.pool, *name)
	if err != nil {
		return err
	}
	if len(infos) == 0 {
		if *name != "" {
			return usagef("layers: no layer named %q ('ingestd layers' lists them)", *name)
		}
		fmt.Fprintln(e.stdout, "no layers yet: add one with 'ingestd add DIR --layer NAME'")
		return nil
	}
	for i, li := range infos {
		if i > 0 {
			fmt.Fprintln(e.stdout)
		}
		writeLayer(e.stdout, li)
	}
	return nil
}

// writeLayer prints one layer as `ingestd layers` shows it.
func writeLayer(w io.Writer, li jobs.LayerInfo) {
	l := li.Layer
	row := func(k, v string) { fmt.Fprintf(w, "  %-13s %s\n", k+":", v) }
	list := func(v []string) string {
		if len(v) == 0 {
			return "(none)"
		}
		return strings.Join(v, ", ")
	}
	fmt.Fprintln(w, l.Name)
	folder := l.Root
	if l.Pushed {
		folder += " (pushed from elsewhere: the schedule skips it)"
	}
	row("folder", folder)
	desc := l.Description
	if desc == "" {
		desc = "(none)"
	}
	row("description", desc)
	row("routes", list(l.RoutingPatterns))
	preset := l.Preset
	if preset == "" {
		preset = "(none)"
	}
	row("preset", preset)
	row("answer mode", string(l.AnswerMode))
	row("chunk size", fmt.Sprint(l.ChunkSize))
	row("include", list(l.Include))
	row("exclude", list(l.Exclude))
	row("archived", list(l.Archived))
	model := l.EmbeddingModel
	if model == "" {
		model = "(the configured one)"
	}
	var pending []string
	for m, n := range li.Pending {
		if n > 0 {
			pending = append(pending, fmt.Sprintf("%s: %d chunks without a vector", m, n))
		}
	}
	sort.Strings(pending)
	if len(pending) > 0 {
		model += " (" + strings.Join(pending, "; ") + ")"
	}
	row("model", model)
	row("documents", fmt.Sprintf("%d, %d failed, %d chunks", li.Documents, li.Failed, li.Chunks))
	if li.ScheduleAllowDeletes {
		row("schedule", "may delete more than half of the documents")
	}
	last := "never"
	if r := li.LastRun; r != nil {
		last = fmt.Sprintf("%s, run %d (%s), started %s", r.Status, r.ID, r.Trigger, r.StartedAt.UTC().Format(time.DateTime+" UTC"))
		if r.FinishedAt != nil {
			last += ", finished " + r.FinishedAt.UTC().Format(time.DateTime+" UTC")
		}
		if r.Error != "" {
			last += ": " + r.Error
		}
	}
	row("last run", last)
}

// set is `ingestd set --layer NAME ...`: it changes a layer's settings
// without ingesting it again. What queries read (description, routes,
// archived globs, answer mode) applies at once; the include and exclude
// globs at the next run.
func (e *env) set(ctx context.Context, args []string) error {
	fs := newFlagSet("set", e.stderr)
	name := layerFlag(fs, "the layer to change")
	desc := fs.String("description", "", "what the layer holds (used for routing)")
	mode := fs.String("answer-mode", "", fmt.Sprintf("%s or %s", schema.AnswerGrounded, schema.AnswerExtractive))
	pushed := fs.Bool("pushed", false, "the layer is pushed from elsewhere: the schedule skips it")
	schedDeletes := fs.Bool("schedule-allow-deletes", false, "let scheduled runs delete more than half of the layer's documents")
	var include, exclude, archived, routing listFlag
	fs.Var(&routing, "route", "routing pattern for questions (repeatable; replaces the list; \"\" empties it)")
	fs.Var(&archived, "archived", "glob of files that are archived (repeatable; replaces the list; \"\" empties it)")
	fs.Var(&include, "include", "glob of files to ingest, from the next run (repeatable; replaces the list)")
	fs.Var(&exclude, "exclude", "glob of files to leave out, from the next run (repeatable; replaces the list)")
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("set takes no arguments besides flags (the folder changes with 'ingestd add DIR --layer NAME')")
	}
	if *name == "" {
		return usagef("set: --layer NAME is required")
	}
	if err := checkLayerName("set", *name); err != nil {
		return err
	}
	changed := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { changed[f.Name] = true })
	delete(changed, "layer")
	delete(changed, "layers")
	if len(changed) == 0 {
		return usagef("set: nothing to change: give --description, --route, --archived, --answer-mode, --include, --exclude, --pushed or --schedule-allow-deletes")
	}
	for _, p := range routing {
		if _, err := schema.RoutePattern(p); err != nil {
			return usagef("set: --route: %v", err)
		}
	}
	var answerMode schema.AnswerMode
	if changed["answer-mode"] {
		m, err := schema.ParseAnswerMode(*mode)
		if err != nil {
			return usagef("set: --answer-mode must be %s or %s", schema.AnswerGrounded, schema.AnswerExtractive)
		}
		answerMode = m
	}
	if err := e.connect(ctx); err != nil {
		return err
	}
	defer e.close()
	l, err := jobs.GetLayer(ctx, e.pool, *name)
	if errors.Is(err, jobs.ErrLayerNotFound) {
		return usagef("set: no layer named %q ('ingestd layers' lists them)", *name)
	}
	if err != nil {
		return err
	}
	if changed["description"] {
		l.Description = *desc
	}
	if changed["route"] {
		l.RoutingPatterns = routing
	}
	if changed["archived"] {
		l.Archived = archived
	}
	if changed["answer-mode"] {
		l.AnswerMode = answerMode
	}
	if changed["include"] {
		l.Include = include
	}
	if changed["exclude"] {
		l.Exclude = exclude
	}
	if changed["pushed"] {
		l.Pushed = *pushed
	}
	if changed["schedule-allow-deletes"] {
		l.ScheduleAllowDeletes = *schedDeletes
	}
	if l, err = jobs.UpsertLayer(ctx, e.pool, l); err != nil {
		return asUsage("set", err)
	}
	names := make([]string, 0, len(changed))
	for k := range changed {
		names = append(names, k)
	}
	sort.Strings(names)
	fmt.Fprintf(e.stdout, "layer %s: changed %s\n", l.Name, strings.Join(names, ", "))
	if changed["include"] || changed["exclude"] {
		fmt.Fprintf(e.stdout, "layer %s: the include and exclude globs apply from the next run ('ingestd ingest --layer %s')\n", l.Name, l.Name)
	}
	return nil
}

// remove is `ingestd remove --layer NAME`: it deletes the layer and what
// was ingested from it, after asking (or with --yes).
func (e *env) remove(ctx context.Context, args []string) error {
	fs := newFlagSet("remove", e.stderr)
	name := layerFlag(fs, "the layer to delete")
	yes := fs.Bool("yes", false, "do not ask")
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("remove takes no arguments besides flags")
	}
	if *name == "" {
		return usagef("remove: --layer NAME is required")
	}
	if err := checkLayerName("remove", *name); err != nil {
		return err
	}
	if err := e.connect(ctx); err != nil {
		return err
	}
	defer e.close()
	infos, err := jobs.DescribeLayers(ctx, e.pool, *name)
	if err != nil {
		return err
	}
	if len(infos) == 0 {
		return usagef("remove: no layer named %q ('ingestd layers' lists them)", *name)
	}
	li := infos[0]
	if !*yes {
		if !interactive(e.stdin) {
			return usagef("remove: layer %s has %d documents and %d chunks; give --yes to delete it without asking", li.Name, li.Documents+li.Failed, li.Chunks)
		}
		fmt.Fprintf(e.stdout, "Delete layer %s (%s): %d documents, %d chunks, their vectors and ingest records? [y/N] ",
			li.Name, li.Root, li.Documents+li.Failed, li.Chunks)
		answer, _ := bufio.NewReader(e.stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			fmt.Fprintln(e.stdout, "nothing deleted")
			return nil
		}
	}
	rm, err := jobs.RemoveLayer(ctx, e.pool, li.Name)
	if errors.Is(err, jobs.ErrLayerBusy) {
		return fmt.Errorf("remove: %w", err)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "layer %s removed: %d documents, %d chunks, %d vectors, %d ingest runs", li.Name, rm.Documents, rm.Chunks, rm.Vectors, rm.Runs)
	if rm.Jobs > 0 {
		fmt.Fprintf(e.stdout, "; %d queued jobs cancelled", rm.Jobs)
	}
	fmt.Fprintln(e.stdout, "; what queryd recorded about it stays")
	return nil
}

// interactive reports whether remove may ask on in: a terminal, or a
// reader a caller handed in (not a file: a pipe or /dev/null, a character
// device too, cannot answer).
func interactive(in io.Reader) bool {
	f, ok := in.(*os.File)
	if !ok {
		return in != nil
	}
	if !isTerminal(f) {
		return false
	}
	st, err1 := f.Stat()
	null, err2 := os.Stat(os.DevNull)
	return err1 == nil && (err2 != nil || !os.SameFile(st, null))
}
