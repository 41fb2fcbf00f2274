-- +goose Up
-- Sharing accounts, the licenses that authenticate them, the device activations of each
-- license and the session tokens issued to them. Secrets are stored only as SHA-256 hashes.
CREATE TABLE accounts (
    cuid             TEXT PRIMARY KEY,
    name             TEXT NOT NULL,
    email            TEXT NOT NULL,
    display_name     TEXT NOT NULL,
    show_author      BOOLEAN NOT NULL DEFAULT TRUE,
    theme            TEXT NOT NULL DEFAULT 'system',
    accent_color     TEXT NOT NULL DEFAULT '#5b6ee1',
    font             TEXT NOT NULL DEFAULT 'sans',
    indexable        BOOLEAN NOT NULL DEFAULT FALSE,
    image_bytes_used BIGINT NOT NULL DEFAULT 0 CHECK (image_bytes_used >= 0),
    created_at       TIMESTAMP NOT NULL
);

CREATE TABLE licenses (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    key_hash     TEXT NOT NULL UNIQUE,
    account_cuid TEXT NOT NULL REFERENCES accounts (cuid),
    active       BOOLEAN NOT NULL DEFAULT TRUE,
    created_at   TIMESTAMP NOT NULL
);

CREATE TABLE activations (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    license_id    BIGINT NOT NULL REFERENCES licenses (id),
    instance_hash TEXT NOT NULL,
    created_at    TIMESTAMP NOT NULL,
    UNIQUE (license_id, instance_hash)
);

CREATE TABLE sessions (
    token_hash   TEXT PRIMARY KEY,
    license_id   BIGINT NOT NULL REFERENCES licenses (id),
    account_cuid TEXT NOT NULL REFERENCES accounts (cuid),
    created_at   TIMESTAMP NOT NULL,
    expires_at   TIMESTAMP NOT NULL
);
CREATE INDEX sessions_license_id ON sessions (license_id);

-- +goose Down
DROP TABLE sessions;
DROP TABLE activations;
DROP TABLE licenses;
DROP TABLE accounts;
