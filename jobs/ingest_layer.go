package jobs

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/stratakb/stratakb/schema"
)

// IngestLayerArgs asks for one ingest run of a layer: walk its folder, decide
// for each file whether it is new, changed, unchanged, renamed or gone, and
// enqueue ingest_file for the files that need parsing.
type IngestLayerArgs struct {
	LayerID int64 `json:"layer_id"`
	RunID   int64 `json:"run_id"`
}

// Kind is the River job kind.
func (IngestLayerArgs) Kind() string { return "ingest_layer" }

// InsertOpts makes a failed walk retry a few times only. A walk goes ahead
// of every parse queued before it (queue.go).
func (IngestLayerArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 3, Queue: QueueIngest, Priority: priorityWalk}
}

// IngestLayerWorker runs IngestLayerArgs jobs.
type IngestLayerWorker struct {
	river.WorkerDefaults[IngestLayerArgs]
	pool     *pgxpool.Pool
	pipeline Pipeline
}

// Timeout bounds one walk of a layer.
func (w *IngestLayerWorker) Timeout(*river.Job[IngestLayerArgs]) time.Duration {
	return walkTimeout
}

// walkedFile is a file the walk found.
type walkedFile struct {
	rel   string // slash-separated path relative to the root
	size  int64
	mtime time.Time
}

// skippedFile is a path the walk did not ingest, with the reason.
type skippedFile struct {
	rel    string
	reason string
}

type storedDoc struct {
	id      int64
	version int
	size    *int64
	mtime   *time.Time
	sha     []byte
	status  schema.DocStatus
	err     *string
}

// Work walks the layer's folder and records what changed.
func (w *IngestLayerWorker) Work(ctx context.Context, job *river.Job[IngestLayerArgs]) error {
	a := job.Args
	layer, err := getLayerByID(ctx, w.pool, a.LayerID)
	if errors.Is(err, ErrLayerNotFound) {
		return river.JobCancel(err)
	}
	if err != nil {
		return err
	}
	files, skipped, err := walkLayer(layer, w.pipeline.Supported)
	if err != nil {
		w.failRun(ctx, a.RunID, err)
		return river.JobCancel(err)
	}

	stored, err := w.storedDocs(ctx, layer.ID)
	if err != nil {
		return err
	}
	type decision struct {
		rel     string
		action  schema.FileAction
		status  schema.FileStatus
		errText string
	}
	var decisions []decision
	var toParse []string
	var touch []walkedFile         // same content, new mtime: update the stat only
	renames := map[string]string{} // new path -> old path
	seen := map[string]bool{}

	// Gone: stored documents whose file is not there any more. Candidates for
	// a rename when a new file has the same content.
	for _, f := range files {
		seen[f.rel] = true
	}
	goneBySHA := map[string]string{}
	for rel, d := range stored {
		if !seen[rel] && d.sha != nil && d.status == schema.DocOK {
			goneBySHA[string(d.sha)] = rel
		}
	}

	for _, f := range files {
		d, ok := stored[f.rel]
		if ok && d.status == schema.DocOK && d.version != w.pipeline.Version {
			// Stored by an older pipeline: parse again.
			decisions = append(decisions, decision{f.rel, schema.ActionChanged, schema.FileQueued, ""})
			toParse = append(toParse, f.rel)
			continue
		}
		if ok && d.size != nil && d.mtime != nil && *d.size == f.size && d.mtime.Equal(truncMicro(f.mtime)) {
			st, e := unchangedOutcome(d)
			decisions = append(decisions, decision{f.rel, schema.ActionUnchanged, st, e})
			continue
		}
		if ok && d.sha != nil && d.size != nil && *d.size == f.size {
			sum, err := fileSHA256(filepath.Join(layer.Root, filepath.FromSlash(f.rel)))
			if err == nil && string(sum) == string(d.sha) {
				touch = append(touch, f)
				st, e := unchangedOutcome(d)
				decisions = append(decisions, decision{f.rel, schema.ActionUnchanged, st, e})
				continue
			}
		}
		if !ok && len(goneBySHA) > 0 {
			sum, err := fileSHA256(filepath.Join(layer.Root, filepath.FromSlash(f.rel)))
			if old, hit := goneBySHA[string(sum)]; err == nil && hit {
				delete(goneBySHA, string(sum))
				renames[f.rel] = old
				decisions = append(decisions, decision{f.rel, schema.ActionRenamed, schema.FileOK, ""})
				continue
			}
		}
		action := schema.ActionNew
		if ok {
			action = schema.ActionChanged
		}
		decisions = append(decisions, decision{f.rel, action, schema.FileQueued, ""})
		toParse = append(toParse, f.rel)
	}
	renamedFrom := map[string]bool{}
	for _, old := range renames {
		renamedFrom[old] = true
	}
	skipReason := map[string]string{}
	for _, s := range skipped {
		skipReason[s.rel] = s.reason
	}
	var gone []int64
	for rel, d := range stored {
		if !seen[rel] && !renamedFrom[rel] {
			gone = append(gone, d.id)
			if why, ok := skipReason[rel]; ok {
				// Stored before, skipped now (excluded, unsupported, a
				// link that leaves the folder): its document goes, and the
				// run says why. One row per path in the run.
				decisions = append(decisions, decision{rel, schema.ActionDeleted, schema.FileSkipped, why})
				delete(skipReason, rel)
				continue
			}
			decisions = append(decisions, decision{rel, schema.ActionDeleted, schema.FileOK, ""})
		}
	}
	// Delete guard: an emptied folder must not wipe the layer.
	allowDeletes, err := runAllowsDeletes(ctx, w.pool, a.RunID)
	if err != nil {
		return err
	}
	if err := deleteGuard(layer, allowDeletes, len(gone), len(stored), len(files)); err != nil {
		w.failRun(ctx, a.RunID, err)
		return river.JobCancel(err)
	}
	for _, s := range skipped {
		if why, ok := skipReason[s.rel]; ok {
			decisions = append(decisions, decision{s.rel, schema.ActionSkipped, schema.FileSkipped, why})
		}
	}
	sort.Slice(decisions, func(i, j int) bool { return decisions[i].rel < decisions[j].rel })

	client, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		return fmt.Errorf("ingest layer %s: %w", layer.Name, err)
	}
	return pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		if len(gone) > 0 {
			if _, err := tx.Exec(ctx, `DELETE FROM strata.documents WHERE id = ANY($1)`, gone); err != nil {
				return fmt.Errorf("delete removed documents: %w", err)
			}
		}
		for newRel, oldRel := range renames {
			if _, err := tx.Exec(ctx, `UPDATE strata.documents SET path = $3, mtime = $4
				WHERE layer_id = $1 AND path = $2`, layer.ID, oldRel, newRel, truncMicro(findFile(files, newRel).mtime)); err != nil {
				return fmt.Errorf("rename document %s to %s: %w", oldRel, newRel, err)
			}
		}
		for _, f := range touch {
			if _, err := tx.Exec(ctx, `UPDATE strata.documents SET mtime = $3 WHERE layer_id = $1 AND path = $2`,
				layer.ID, f.rel, truncMicro(f.mtime)); err != nil {
				return fmt.Errorf("update mtime of %s: %w", f.rel, err)
			}
		}
		rels := make([]string, len(decisions))
		actions := make([]string, len(decisions))
		statuses := make([]string, len(decisions))
		errs := make([]*string, len(decisions))
		for i, d := range decisions {
			rels[i], actions[i], statuses[i] = d.rel, string(d.action), string(d.status)
			if d.errText != "" {
				e := d.errText
				errs[i] = &e
			}
		}
		if _, err := tx.Exec(ctx, `
			INSERT INTO strata.ingest_files (run_id, path, action, status, error)
			SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[])
			ON CONFLICT (run_id, path) DO UPDATE SET action = EXCLUDED.action, status = EXCLUDED.status,
				error = EXCLUDED.error, updated_at = now()`,
			a.RunID, rels, actions, statuses, errs); err != nil {
			return fmt.Errorf("record walk of layer %s: %w", layer.Name, err)
		}
		if len(toParse) > 0 {
			params := make([]river.InsertManyParams, len(toParse))
			for i, rel := range toParse {
				params[i] = river.InsertManyParams{Args: IngestFileArgs{LayerID: layer.ID, RunID: a.RunID, Path: rel},
					InsertOpts: &river.InsertOpts{Priority: filePriority(i)}}
			}
			if _, err := client.InsertManyTx(ctx, tx, params); err != nil {
				return fmt.Errorf("enqueue files of layer %s: %w", layer.Name, err)
			}
		}
		status := schema.RunRunning
		if len(toParse) == 0 {
			status = schema.RunDone
		}
		_, err := tx.Exec(ctx, `UPDATE strata.ingest_runs SET status = $2, walked_at = now(),
			finished_at = CASE WHEN $3 THEN now() END WHERE id = $1`, a.RunID, status, status.Finished())
		if err == nil && status.Finished() {
			// A run with nothing to parse may still have deleted documents.
			_, err = tx.Exec(ctx, `SELECT strata.pack_postings($1)`, layer.ID)
		}
		return err
	})
}

// unchangedOutcome is the run's outcome for an unchanged file: what its
// document was, with the error it failed with.
func unchangedOutcome(d storedDoc) (schema.FileStatus, string) {
	if d.status == schema.DocFailed {
		return schema.FileFailed, deref(d.err)
	}
	return schema.FileOK, ""
}

func (w *IngestLayerWorker) failRun(ctx context.Context, runID int64, cause error) {
	_, _ = w.pool.Exec(context.WithoutCancel(ctx), `UPDATE strata.ingest_runs SET status = $3, error = $2,
		finished_at = now() WHERE id = $1`, runID, cause.Error(), schema.RunFailed)
}

func (w *IngestLayerWorker) storedDocs(ctx context.Context, layerID int64) (map[string]storedDoc, error) {
	rows, err := w.pool.Query(ctx, `SELECT id, path, size, mtime, sha256, status, error, chunker_version
		FROM strata.documents WHERE layer_id = $1`, layerID)
	if err != nil {
		return nil, fmt.Errorf("read stored documents: %w", err)
	}
	out := map[string]storedDoc{}
	var d storedDoc
	var rel string
	if _, err := pgx.ForEachRow(rows, []any{&d.id, &rel, &d.size, &d.mtime, &d.sha, &d.status, &d.err, &d.version},
		func() error {
			// Zeroed for the next row, whose pointers must not alias this one's.
			out[rel], d = d, storedDoc{}
			return nil
		}); err != nil {
		return nil, fmt.Errorf("read stored documents: %w", err)
	}
	return out, nil
}

// walkLayer lists the files of a layer that match its globs. It never leaves
// the root: a symlink that resolves outside it, a broken link and a link loop
// are reported as skipped; symlinked folders are not followed. Hidden files
// and folders (names starting with '.') are left out.
func walkLayer(layer Layer, supported func(string) bool) ([]walkedFile, []skippedFile, error) {
	info, err := os.Stat(layer.Root)
	if err != nil {
		return nil, nil, fmt.Errorf("layer %s: folder %s: %w", layer.Name, layer.Root, err)
	}
	if !info.IsDir() {
		return nil, nil, fmt.Errorf("layer %s: %s is not a folder", layer.Name, layer.Root)
	}
	realRoot, err := filepath.EvalSymlinks(layer.Root)
	if err != nil {
		return nil, nil, fmt.Errorf("layer %s: resolve %s: %w", layer.Name, layer.Root, err)
	}
	for _, g := range append(append([]string{}, layer.Include...), layer.Exclude...) {
		if !doublestar.ValidatePattern(g) {
			return nil, nil, fmt.Errorf("layer %s: invalid glob %q", layer.Name, g)
		}
	}
	var files []walkedFile
	var skipped []skippedFile
	err = filepath.WalkDir(layer.Root, func(p string, d fs.DirEntry, err error) error {
		rel, rerr := filepath.Rel(layer.Root, p)
		if rerr != nil {
			return rerr
		}
		rel = filepath.ToSlash(rel)
		if err != nil {
			if rel == "." {
				return err
			}
			skipped = append(skipped, skippedFile{rel, "cannot read: " + err.Error()})
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if rel == "." {
			return nil
		}
		// Every path the walk meets and does not ingest is reported with
		// its reason; a folder it does not enter is reported once, as
		// "name/", not file by file.
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				skipped = append(skipped, skippedFile{rel + "/", "hidden folder (name starts with '.'): not read"})
				return fs.SkipDir
			}
			skipped = append(skipped, skippedFile{rel, "hidden file (name starts with '.')"})
			return nil
		}
		if g := matchGlob(layer.Exclude, rel); g != "" {
			if d.IsDir() {
				skipped = append(skipped, skippedFile{rel + "/", fmt.Sprintf("folder excluded by --exclude %s: not read", g)})
				return fs.SkipDir
			}
			skipped = append(skipped, skippedFile{rel, "excluded by --exclude " + g})
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if why := unwanted(layer, rel, supported); why != "" {
			skipped = append(skipped, skippedFile{rel, why})
			return nil
		}
		var fi fs.FileInfo
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := filepath.EvalSymlinks(p)
			if err != nil {
				why := "unreadable symlink: " + err.Error()
				switch {
				case errors.Is(err, fs.ErrNotExist):
					why = "broken symlink: its target does not exist"
				case errors.Is(err, syscall.ELOOP) || strings.Contains(err.Error(), "too many links"):
					why = "symlink loop"
				}
				skipped = append(skipped, skippedFile{rel, why})
				return nil
			}
			if !within(realRoot, target) {
				skipped = append(skipped, skippedFile{rel, "symlink points outside the layer folder"})
				return nil
			}
			fi, err = os.Stat(target)
			if err != nil {
				skipped = append(skipped, skippedFile{rel, "cannot stat: " + err.Error()})
				return nil
			}
			if fi.IsDir() {
				skipped = append(skipped, skippedFile{rel, "symlinked folder not followed"})
				return nil
			}
		} else {
			fi, err = d.Info()
			if err != nil {
				skipped = append(skipped, skippedFile{rel, "cannot stat: " + err.Error()})
				return nil
			}
		}
		if !fi.Mode().IsRegular() {
			skipped = append(skipped, skippedFile{rel, "not a regular file"})
			return nil
		}
		files = append(files, walkedFile{rel: rel, size: fi.Size(), mtime: fi.ModTime()})
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("walk layer %s: %w", layer.Name, err)
	}
	return files, skipped, nil
}

// unwanted applies the include globs, or the pipeline's supported types when
// the layer has none, and says why a file is left out ("" when it is not).
func unwanted(layer Layer, rel string, supported func(string) bool) string {
	if len(layer.Include) > 0 {
		if matchGlob(layer.Include, rel) == "" {
			return "not matched by any --include glob (" + strings.Join(layer.Include, ", ") + ")"
		}
		return ""
	}
	if supported == nil || supported(rel) {
		return ""
	}
	if ext := path.Ext(rel); ext != "" {
		return "format not supported (" + strings.ToLower(ext) + ")"
	}
	return "format not supported (no file extension)"
}

// matchGlob returns the first of globs that matches rel, or "".
func matchGlob(globs []string, rel string) string {
	for _, g := range globs {
		if ok, _ := doublestar.Match(g, rel); ok {
			return g
		}
	}
	return ""
}

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func fileSHA256(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}

func findFile(files []walkedFile, rel string) walkedFile {
	for _, f := range files {
		if f.rel == rel {
			return f
		}
	}
	return walkedFile{}
}

func truncMicro(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
