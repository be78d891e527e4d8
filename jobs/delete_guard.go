package jobs

import (
	"context"
	"errors"
	"fmt"
)

// DeleteGuardFloor is how many documents a run may always delete. Above it,
// a run that would delete more than half of a layer's documents stops before
// deleting anything, unless the run allows it (--allow-deletes, or the
// layer's schedule_allow_deletes for a scheduled run). A handful is spared
// the check so that removing two files from a three-file folder does not need
// a flag; a folder with no file left to ingest is refused whatever its size,
// since an unmounted share or a checkout that failed half-way looks exactly
// like that.
const DeleteGuardFloor = 3

// ErrDeletesRefused marks a run stopped by the delete guard.
var ErrDeletesRefused = errors.New("refused to delete")

// deletesRefused says whether a walk that found walked files, where the
// layer has stored documents, and gone of them would be deleted, must stop.
func deletesRefused(gone, stored, walked int) bool {
	if gone == 0 {
		return false
	}
	if walked == 0 {
		return true
	}
	return gone > DeleteGuardFloor && 2*gone > stored
}

// deleteGuard returns the error that stops the run when its deletions are
// refused, or nil.
func deleteGuard(layer Layer, allow bool, gone, stored, walked int) error {
	if allow || !deletesRefused(gone, stored, walked) {
		return nil
	}
	why := fmt.Sprintf("more than half of the layer's %d documents", stored)
	if walked == 0 {
		why = "the folder has no file left to ingest"
	}
	return fmt.Errorf("%w %d of %d documents of layer %s (%s: an unmounted share or a failed checkout looks like this); "+
		"nothing was changed; if the files were removed on purpose, run 'ingestd ingest --layer %s --allow-deletes'",
		ErrDeletesRefused, gone, stored, layer.Name, why, layer.Name)
}

// runAllowsDeletes reads whether the run may delete without the guard.
func runAllowsDeletes(ctx context.Context, q pgxQuerier, runID int64) (bool, error) {
	var allow bool
	if err := q.QueryRow(ctx, `SELECT allow_deletes FROM strata.ingest_runs WHERE id = $1`, runID).Scan(&allow); err != nil {
		return false, fmt.Errorf("read run %d: %w", runID, err)
	}
	return allow, nil
}
