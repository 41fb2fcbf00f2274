-- +goose NO TRANSACTION
-- +goose Up
-- SQLite stores a row's columns in order, and a value larger than a page on a chain of
-- overflow pages: reading a column that comes after a large one walks that chain. Columns
-- added by ALTER TABLE went after content and html, so reading a note's etag, render id,
-- outline, expiry or html_bytes walked two chains of its size (a page's re-check of 20
-- embedded notes of 1.8 MB took 19 ms, the owner's list walked every note). The table is
-- rebuilt with the small columns first, then render_outline, render_links and
-- properties, then html (read by pages and embeds) and content last, as SQLite's ALTER
-- TABLE documentation describes: foreign keys off for the rebuild, which runs in one
-- transaction. A column added later goes at the end again: a small one read on a hot
-- path needs a rebuild like this one. Postgres keeps large values out of line (TOAST)
-- and needs nothing.
PRAGMA foreign_keys = OFF;
BEGIN;
CREATE TABLE publications_new (
    cuid            TEXT PRIMARY KEY,
    account_cuid    TEXT NOT NULL REFERENCES accounts (cuid),
    title           TEXT,
    summary         TEXT,
    show_properties BOOLEAN NOT NULL,
    expires_at      TIMESTAMP,
    unpublished     BOOLEAN NOT NULL DEFAULT FALSE,
    next_version    BIGINT NOT NULL DEFAULT 1,
    created_ms      BIGINT NOT NULL,
    created_at      TIMESTAMP NOT NULL,
    updated_at      TIMESTAMP NOT NULL,
    render_version  INTEGER NOT NULL DEFAULT 0,
    etag            TEXT NOT NULL DEFAULT '',
    render_id       TEXT NOT NULL DEFAULT '',
    render_tries    INTEGER NOT NULL DEFAULT 0,
    render_misses   INTEGER NOT NULL DEFAULT 0,
    render_retry_ms BIGINT NOT NULL DEFAULT 0,
    path            TEXT,
    path_key        TEXT,
    names_version   INTEGER NOT NULL DEFAULT 0,
    html_bytes      INTEGER NOT NULL DEFAULT 0,
    render_outline  TEXT NOT NULL DEFAULT '',
    render_links    TEXT NOT NULL DEFAULT '',
    properties      TEXT,
    html            TEXT NOT NULL DEFAULT '',
    content         TEXT NOT NULL
);
INSERT INTO publications_new (cuid, account_cuid, title, summary, show_properties, expires_at, unpublished, next_version,
    created_ms, created_at, updated_at, render_version, etag, render_id, render_tries, render_misses, render_retry_ms,
    path, path_key, names_version, html_bytes, render_outline, render_links, properties, html, content)
SELECT cuid, account_cuid, title, summary, show_properties, expires_at, unpublished, next_version,
    created_ms, created_at, updated_at, render_version, etag, render_id, render_tries, render_misses, render_retry_ms,
    path, path_key, names_version, html_bytes, render_outline, render_links, properties, html, content
FROM publications;
DROP TABLE publications;
ALTER TABLE publications_new RENAME TO publications;
CREATE INDEX publications_list ON publications (account_cuid, created_ms DESC, cuid DESC);
CREATE INDEX publications_unpublished ON publications (cuid) WHERE unpublished;
CREATE INDEX publications_render_version ON publications (render_version);
CREATE UNIQUE INDEX publications_path ON publications (account_cuid, path_key) WHERE path_key IS NOT NULL AND NOT unpublished;
CREATE INDEX publications_names_version ON publications (names_version);
COMMIT;
PRAGMA foreign_keys = ON;

-- +goose Down
-- The order of the columns means nothing to the queries: there is nothing to undo.
SELECT 1;
