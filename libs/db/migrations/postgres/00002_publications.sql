-- +goose Up
-- Publications, their version snapshots, their images and the image bytes. Expiry is not
-- a column of state: it is computed from expires_at at read time.
CREATE TABLE publications (
    cuid            TEXT PRIMARY KEY,
    account_cuid    TEXT NOT NULL REFERENCES accounts (cuid),
    title           TEXT,
    summary         TEXT,
    content         TEXT NOT NULL,
    properties      TEXT,
    show_properties BOOLEAN NOT NULL,
    expires_at      TIMESTAMPTZ,
    unpublished     BOOLEAN NOT NULL DEFAULT FALSE,
    next_version    BIGINT NOT NULL DEFAULT 1,
    created_ms      BIGINT NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL
);
-- The owner's list: newest first, ties broken by cuid, keyset-paginated.
CREATE INDEX publications_list ON publications (account_cuid, created_ms DESC, cuid DESC);

CREATE TABLE versions (
    publication_cuid TEXT NOT NULL REFERENCES publications (cuid),
    version          BIGINT NOT NULL,
    title            TEXT,
    summary          TEXT,
    content          TEXT NOT NULL,
    properties       TEXT,
    show_properties  BOOLEAN NOT NULL,
    expires_at       TIMESTAMPTZ,
    created_at       TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (publication_cuid, version)
);

CREATE TABLE images (
    id               BIGSERIAL PRIMARY KEY,
    account_cuid     TEXT NOT NULL REFERENCES accounts (cuid),
    publication_cuid TEXT NOT NULL REFERENCES publications (cuid),
    filename         TEXT NOT NULL,
    media_type       TEXT NOT NULL,
    size             BIGINT NOT NULL,
    sha256           TEXT NOT NULL,
    blob_key         TEXT NOT NULL UNIQUE,
    -- released: no longer counted toward the quota (the note was unpublished); the
    -- reaper deletes the bytes and then the row.
    released         BOOLEAN NOT NULL DEFAULT FALSE,
    created_at       TIMESTAMPTZ NOT NULL,
    UNIQUE (publication_cuid, filename)
);
CREATE INDEX images_released ON images (id) WHERE released;

-- Image bytes, behind the blob interface: no foreign key, as with an object store.
CREATE TABLE blobs (
    key  TEXT PRIMARY KEY,
    data BYTEA NOT NULL
);

-- Keys the service makes for itself on first use (the cursor MAC key), shared by every
-- replica through the database.
CREATE TABLE service_keys (
    name   TEXT PRIMARY KEY,
    secret BYTEA NOT NULL
);

-- +goose Down
DROP TABLE service_keys;
DROP TABLE blobs;
DROP TABLE images;
DROP TABLE versions;
DROP TABLE publications;
