package schema

import (
	"fmt"
	"strings"
)

// The string values below are stored in the database, whose CHECK
// constraints (migration 0001) allow exactly these; TestStatesMatchDatabase
// reads the constraints of a migrated database and fails when a set here
// and its column's CHECK differ. SQL text may name a value as a literal (a
// partial index such as ingest_files_queued is used only by a query that
// names its predicate's literal); Go code uses the constants.

// RunStatus is the state of an ingest run (strata.ingest_runs.status).
type RunStatus string

// Run statuses.
const (
	RunWalking RunStatus = "walking" // the folder is being scanned
	RunRunning RunStatus = "running" // files are queued or being parsed
	RunDone    RunStatus = "done"    // every file has an outcome
	RunFailed  RunStatus = "failed"  // the run stopped; its error says why
)

// RunStatuses lists every run status.
func RunStatuses() []RunStatus { return []RunStatus{RunWalking, RunRunning, RunDone, RunFailed} }

// Finished reports whether a run in status s has ended.
func (s RunStatus) Finished() bool { return s == RunDone || s == RunFailed }

// FileStatus is the outcome of one file of a run (strata.ingest_files.status).
type FileStatus string

// File statuses.
const (
	FileQueued  FileStatus = "queued"  // waiting for its parse job
	FileOK      FileStatus = "ok"      // stored, or unchanged and good
	FileFailed  FileStatus = "failed"  // could not be parsed or read
	FileSkipped FileStatus = "skipped" // left out (format, size, guard, vanished)
)

// FileStatuses lists every file status.
func FileStatuses() []FileStatus { return []FileStatus{FileQueued, FileOK, FileFailed, FileSkipped} }

// FileAction is what a run decided about a file (strata.ingest_files.action).
type FileAction string

// File actions.
const (
	ActionNew       FileAction = "new"
	ActionChanged   FileAction = "changed"
	ActionUnchanged FileAction = "unchanged"
	ActionDeleted   FileAction = "deleted"
	ActionRenamed   FileAction = "renamed"
	ActionSkipped   FileAction = "skipped"
)

// FileActions lists every file action.
func FileActions() []FileAction {
	return []FileAction{ActionNew, ActionChanged, ActionUnchanged, ActionDeleted, ActionRenamed, ActionSkipped}
}

// DocStatus is the state of a stored document (strata.documents.status).
type DocStatus string

// Document statuses.
const (
	DocOK     DocStatus = "ok"     // its text, sections and chunks are stored
	DocFailed DocStatus = "failed" // only its facts and error are kept
)

// DocStatuses lists every document status.
func DocStatuses() []DocStatus { return []DocStatus{DocOK, DocFailed} }

// AnswerMode is how answers from a layer are written (strata.layers.answer_mode).
type AnswerMode string

// Answer modes.
const (
	// AnswerGrounded: answers are written from the layer's passages and
	// cite them.
	AnswerGrounded AnswerMode = "grounded"
	// AnswerExtractive: answers quote the passages as they stand.
	AnswerExtractive AnswerMode = "extractive"
	// DefaultAnswerMode is the mode of a layer that sets none.
	DefaultAnswerMode = AnswerGrounded
)

// AnswerModes lists every answer mode.
func AnswerModes() []AnswerMode { return []AnswerMode{AnswerGrounded, AnswerExtractive} }

// Valid reports whether m is one of the answer modes.
func (m AnswerMode) Valid() bool { return m == AnswerGrounded || m == AnswerExtractive }

// ParseAnswerMode reads an answer mode given from outside (a flag, a tool
// argument), exactly as written.
func ParseAnswerMode(s string) (AnswerMode, error) {
	m := AnswerMode(s)
	if !m.Valid() {
		return "", fmt.Errorf("answer mode %q: must be %s or %s", s, AnswerGrounded, AnswerExtractive)
	}
	return m, nil
}

// Chunk sizes of a layer (strata.layers.chunk_size), in bytes of text. The
// column's DEFAULT and CHECK hold the same numbers; TestDefaultsMatchDatabase
// checks them. The chunker's DefaultSize is DefaultChunkSize.
const (
	// DefaultChunkSize is the chunk size of a layer that sets none;
	// chunker.DefaultSize says why 800.
	DefaultChunkSize = 800
	MinChunkSize     = 200
	MaxChunkSize     = 20000
)

// ModelLiteral is the SQL string literal of an embedding model's name, as
// it is written into the predicate of the model's partial HNSW index
// (WHERE model = '<name>') and into every query that must use that index:
// the planner proves a partial index's predicate only from a literal, never
// from a parameter, so the two must be the same text.
func ModelLiteral(model string) string {
	return "'" + strings.ReplaceAll(model, "'", "''") + "'"
}
