-- Schema v1 of StrataKB: layers, documents with their full stored text,
-- pages, sections (the structure map), chunks with a generated tsvector, and
-- vectors stored by content hash and model. River keeps its own tables in the
-- schema "river".

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE strata.layers (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name             text NOT NULL UNIQUE CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$'),
    root             text NOT NULL,
    include_globs    text[] NOT NULL DEFAULT '{}',
    exclude_globs    text[] NOT NULL DEFAULT '{}',
    description      text NOT NULL DEFAULT '',
    routing_patterns text[] NOT NULL DEFAULT '{}',
    answer_mode      text NOT NULL DEFAULT 'grounded' CHECK (answer_mode IN ('grounded', 'extractive')),
    archived_globs   text[] NOT NULL DEFAULT '{}',
    chunk_size       integer NOT NULL DEFAULT 1000 CHECK (chunk_size BETWEEN 200 AND 20000),
    preset           text NOT NULL DEFAULT '',
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);

-- One row per file of a layer, also for files that failed: a failed file keeps
-- its size, mtime and hash so an unchanged bad file is not parsed again.
CREATE TABLE strata.documents (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    layer_id        bigint NOT NULL REFERENCES strata.layers (id) ON DELETE CASCADE,
    path            text NOT NULL,            -- relative to the layer root, '/'-separated
    size            bigint,
    mtime           timestamptz,
    sha256          bytea,
    status          text NOT NULL CHECK (status IN ('ok', 'failed')),
    error           text,
    warnings        text[] NOT NULL DEFAULT '{}',
    format          text,
    title           text NOT NULL DEFAULT '',
    body            text,                     -- the stored text that refs point into
    body_start      integer NOT NULL DEFAULT 0,
    doc_date        date,
    date_source     text CHECK (date_source IN ('front_matter', 'file')),
    supersedes      text[] NOT NULL DEFAULT '{}',
    meta            jsonb NOT NULL DEFAULT '{}',
    total_pages     integer,
    chunker_version integer NOT NULL DEFAULT 0,
    parsed_at       timestamptz NOT NULL DEFAULT now(),
    UNIQUE (layer_id, path)
);
CREATE INDEX documents_supersedes ON strata.documents USING gin (supersedes);
CREATE INDEX documents_sha256 ON strata.documents (layer_id, sha256);

CREATE TABLE strata.pages (
    document_id    bigint NOT NULL REFERENCES strata.documents (id) ON DELETE CASCADE,
    number         integer NOT NULL,
    start_off      integer NOT NULL,
    end_off        integer NOT NULL,
    text_origin    text NOT NULL CHECK (text_origin IN ('text', 'ocr')),
    ocr_confidence real,
    PRIMARY KEY (document_id, number)
);

CREATE TABLE strata.sections (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    document_id bigint NOT NULL REFERENCES strata.documents (id) ON DELETE CASCADE,
    layer_id    bigint NOT NULL REFERENCES strata.layers (id) ON DELETE CASCADE,
    ord         integer NOT NULL,
    parent_ord  integer,
    number      text NOT NULL DEFAULT '',
    title       text NOT NULL DEFAULT '',
    kind        text NOT NULL,
    level       integer NOT NULL,
    start_off   integer NOT NULL,
    heading_end integer NOT NULL,
    end_off     integer NOT NULL,
    clause_path text NOT NULL,
    ref_key     text,                          -- lookup key for exact clause references
    UNIQUE (document_id, ord)
);
CREATE INDEX sections_ref_key ON strata.sections (ref_key, layer_id) WHERE ref_key IS NOT NULL;

-- Chunk rows are kept across re-ingests when their text is unchanged (same id),
-- so ord is not unique while a document is being rewritten.
CREATE TABLE strata.chunks (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    document_id  bigint NOT NULL REFERENCES strata.documents (id) ON DELETE CASCADE,
    layer_id     bigint NOT NULL REFERENCES strata.layers (id) ON DELETE CASCADE,
    ord          integer NOT NULL,
    start_off    integer NOT NULL CHECK (start_off >= 0),
    end_off      integer NOT NULL,
    line_start   integer NOT NULL,
    line_end     integer NOT NULL,
    page         integer,
    clause_path  text NOT NULL DEFAULT '',
    text_origin  text NOT NULL DEFAULT 'text' CHECK (text_origin IN ('text', 'ocr')),
    text         text NOT NULL,
    content_hash bytea NOT NULL,
    metadata     jsonb NOT NULL DEFAULT '{}',
    tsv          tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
    CHECK (end_off >= start_off)
);
CREATE INDEX chunks_tsv ON strata.chunks USING gin (tsv);
CREATE INDEX chunks_document ON strata.chunks (document_id, ord);
CREATE INDEX chunks_layer ON strata.chunks (layer_id);
CREATE INDEX chunks_content_hash ON strata.chunks (content_hash);

-- Vectors are keyed by the model that made them and the content hash of the
-- text, so vectors of several models coexist and an unchanged text is never
-- embedded twice. A chunk may have several window vectors (window 0, 1, …).
CREATE TABLE strata.embeddings (
    model        text NOT NULL,
    content_hash bytea NOT NULL,
    window_no    smallint NOT NULL DEFAULT 0,
    dims         integer NOT NULL,
    embedding    vector NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (model, content_hash, window_no),
    CHECK (vector_dims(embedding) = dims)
);

-- One row per ingest run (ingestd add, ingestd ingest, a scheduled re-ingest)
-- and one per file the run looked at: what it decided and how it ended.
CREATE TABLE strata.ingest_runs (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    layer_id    bigint NOT NULL REFERENCES strata.layers (id) ON DELETE CASCADE,
    trigger     text NOT NULL DEFAULT 'cli',
    status      text NOT NULL DEFAULT 'walking' CHECK (status IN ('walking', 'running', 'done', 'failed')),
    error       text,
    started_at  timestamptz NOT NULL DEFAULT now(),
    walked_at   timestamptz,
    finished_at timestamptz
);
CREATE INDEX ingest_runs_layer ON strata.ingest_runs (layer_id, id DESC);

CREATE TABLE strata.ingest_files (
    run_id      bigint NOT NULL REFERENCES strata.ingest_runs (id) ON DELETE CASCADE,
    path        text NOT NULL,
    action      text NOT NULL CHECK (action IN ('new', 'changed', 'unchanged', 'deleted', 'renamed', 'skipped')),
    status      text NOT NULL CHECK (status IN ('queued', 'ok', 'failed', 'skipped')),
    error       text,
    warnings    text[] NOT NULL DEFAULT '{}',
    chunks      integer NOT NULL DEFAULT 0,
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, path)
);
CREATE INDEX ingest_files_queued ON strata.ingest_files (run_id) WHERE status = 'queued';
