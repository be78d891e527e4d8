-- Crash recovery and the guard against wiping a layer.
--
-- ingest_workers: one row per ingestd process that runs River workers
-- (`ingestd serve`, `ingestd add --wait`). Its River client ID is client_id,
-- which River writes into river_job.attempted_by, so a running job can be
-- traced to the process working it. The process holds a session advisory
-- lock keyed by its row id on a connection of its own and refreshes
-- heartbeat_at every few seconds: when the process dies (kill -9, a crash),
-- PostgreSQL drops the connection and the lock with it, and the other
-- processes see at once that the worker is gone and take over its jobs
-- instead of waiting for River's rescue. A stale heartbeat (a host cut off
-- from the network keeps its connection for a while) counts as gone too.
CREATE TABLE strata.ingest_workers (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    client_id    text NOT NULL UNIQUE,
    host         text NOT NULL DEFAULT '',
    pid          integer NOT NULL DEFAULT 0,
    started_at   timestamptz NOT NULL DEFAULT now(),
    heartbeat_at timestamptz NOT NULL DEFAULT now(),
    stopped_at   timestamptz
);

-- The worker process that started a run with --wait (NULL for a run queued
-- for `ingestd serve` or started by the schedule), and whether the run may
-- delete more than half of the layer's documents.
ALTER TABLE strata.ingest_runs
    ADD COLUMN worker_id text,
    ADD COLUMN allow_deletes boolean NOT NULL DEFAULT false;

-- pushed: the layer is ingested from elsewhere (a CI runner pushing its
-- checkout), so the schedule leaves it alone. schedule_allow_deletes: a
-- scheduled run of the layer may delete more than half of its documents.
ALTER TABLE strata.layers
    ADD COLUMN pushed boolean NOT NULL DEFAULT false,
    ADD COLUMN schedule_allow_deletes boolean NOT NULL DEFAULT false;

-- Whether each worker is alive: not stopped, a heartbeat in the last two
-- minutes, and its advisory lock held. The lock key is 0x574B5200 in the
-- high 32 bits and the row id in the low ones, as jobs.workerLockSpace says;
-- pg_locks shows a bigint advisory key as classid = high half, objid = low
-- half, objsubid = 1.
CREATE VIEW strata.ingest_worker_state AS
SELECT w.id, w.client_id, w.host, w.pid, w.started_at, w.heartbeat_at, w.stopped_at,
    coalesce(w.stopped_at, w.heartbeat_at) AS last_seen,
    (w.stopped_at IS NULL AND w.heartbeat_at > now() - interval '2 minutes' AND EXISTS (
        SELECT 1 FROM pg_catalog.pg_locks k
        WHERE k.locktype = 'advisory' AND k.granted AND k.objsubid = 1
        AND k.database = (SELECT d.oid FROM pg_catalog.pg_database d WHERE d.datname = current_database())
        AND k.classid = 1464553984::oid AND k.objid = w.id::oid)) AS alive
FROM strata.ingest_workers w;
