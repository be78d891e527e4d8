package jobs

import (
	"crypto/sha256"
	"encoding/binary"
)

// Advisory locks. Every session advisory lock StrataKB takes has a bigint
// key made of two halves: the high 32 bits name what is locked (a space,
// four ASCII letters), the low 32 bits say which one. pg_locks shows such a
// key as classid = high half, objid = low half, objsubid = 1. The spaces:
//
//	"WKR\0" (0x574B5200)  a live worker process; low half: its
//	                      strata.ingest_workers id (the ingest_worker_state
//	                      view of migration 0008 looks for it)
//	"EMBD"  (0x454D4244)  the embedding of one layer; low half: the layer id
//	"HNSW"  (0x484E5357)  the build of one model's HNSW index; low half: the
//	                      first four bytes of the SHA-256 of the model name,
//	                      the same digest the index's name is made from
//
// schema/migrate takes one more, the whole key 0x5374726174614b42
// ("StrataKB"), while it migrates.
const (
	workerLockSpace = int64(0x574b5200) << 32 // "WKR\0"
	embedLockSpace  = int64(0x454d4244) << 32 // "EMBD"
	hnswLockSpace   = int64(0x484e5357) << 32 // "HNSW"
)

// lockKey is the key of item in space; item's high 32 bits are dropped
// (layer and worker ids stay far below 2^32).
func lockKey(space, item int64) int64 { return space | item&0xffffffff }

// hnswLockKey is the key of the lock taken while model's HNSW index is
// built. It is keyed on the model, not on its dimensions: each model has an
// index of its own (partial on the model), so two models of the same
// dimensions build theirs independently.
func hnswLockKey(model string) int64 {
	sum := sha256.Sum256([]byte(model))
	return lockKey(hnswLockSpace, int64(binary.BigEndian.Uint32(sum[:4])))
}
