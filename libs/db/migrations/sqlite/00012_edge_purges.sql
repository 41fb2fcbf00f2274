-- +goose Up
-- The edge's purge outbox (libs/edge): a change that alters a public read writes a row
-- in its own transaction when an edge is configured (SHARE_EDGE_PURGE_URLS), and the
-- purge job of a writing target sends it to the edges at least once. note_cuid '' means
-- every public read of the account (its pages' links changed, or its settings). due_ms
-- is when a worker may take the row (a claim moves it past the claim's lease, a first
-- send moves it a second on for the second send), sends how many times it was sent.
CREATE TABLE edge_purges (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    account_cuid TEXT NOT NULL,
    note_cuid    TEXT NOT NULL DEFAULT '',
    hard         BOOLEAN NOT NULL DEFAULT FALSE,
    created_ms   BIGINT NOT NULL,
    due_ms       BIGINT NOT NULL,
    sends        SMALLINT NOT NULL DEFAULT 0
);
CREATE INDEX edge_purges_due ON edge_purges (due_ms);
-- The key of the Surrogate-Key hashes, made here so that read-only targets can read it.
INSERT OR IGNORE INTO service_keys (name, secret) VALUES ('surrogate', randomblob(32));

-- +goose Down
DELETE FROM service_keys WHERE name = 'surrogate';
DROP TABLE edge_purges;
