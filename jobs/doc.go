// Package jobs holds StrataKB's River job arguments and workers: ingest a
// layer (walk its folder and decide what changed), ingest a file (parse,
// structure, chunk and store it in one transaction). It owns every write to
// layers, documents, sections and chunks.
package jobs
