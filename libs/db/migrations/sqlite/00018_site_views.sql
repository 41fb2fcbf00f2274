-- +goose NO TRANSACTION
-- +goose Up
-- What the views of a site (libs/site) read of many notes at once, kept beside each
-- publication in the transaction that writes it (as on Postgres: 00018 there).
-- site_excluded (the properties say `site: false`, site.Excluded) is read by every
-- listing of a site, so the table is rebuilt to keep it among the small columns, before
-- the large ones (00015 says why).
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
    site_excluded   BOOLEAN NOT NULL DEFAULT FALSE,
    html_bytes      INTEGER NOT NULL DEFAULT 0,
    render_outline  TEXT NOT NULL DEFAULT '',
    render_links    TEXT NOT NULL DEFAULT '',
    properties      TEXT,
    html            TEXT NOT NULL DEFAULT '',
    content         TEXT NOT NULL
);
INSERT INTO publications_new (cuid, account_cuid, title, summary, show_properties, expires_at, unpublished, next_version,
    created_ms, created_at, updated_at, render_version, etag, render_id, render_tries, render_misses, render_retry_ms,
    path, path_key, names_version, site_excluded, html_bytes, render_outline, render_links, properties, html, content)
SELECT cuid, account_cuid, title, summary, show_properties, expires_at, unpublished, next_version,
    created_ms, created_at, updated_at, render_version, etag, render_id, render_tries, render_misses, render_retry_ms,
    path, path_key, names_version, properties IS NOT NULL AND json_type(properties, '$.site') = 'false', html_bytes,
    render_outline, render_links, properties, html, content
FROM publications;
DROP TABLE publications;
ALTER TABLE publications_new RENAME TO publications;
CREATE INDEX publications_list ON publications (account_cuid, created_ms DESC, cuid DESC);
CREATE INDEX publications_unpublished ON publications (cuid) WHERE unpublished;
CREATE INDEX publications_render_version ON publications (render_version);
CREATE UNIQUE INDEX publications_path ON publications (account_cuid, path_key) WHERE path_key IS NOT NULL AND NOT unpublished;
CREATE INDEX publications_names_version ON publications (names_version);
CREATE INDEX publications_site ON publications (account_cuid, path_key) WHERE path_key IS NOT NULL AND NOT unpublished;
CREATE TABLE note_links (
    publication_cuid TEXT NOT NULL REFERENCES publications (cuid) ON DELETE CASCADE,
    account_cuid     TEXT NOT NULL,
    key              TEXT NOT NULL,
    PRIMARY KEY (publication_cuid, key)
);
CREATE INDEX note_links_key ON note_links (account_cuid, key);
COMMIT;
PRAGMA foreign_keys = ON;

-- +goose Down
DROP TABLE note_links;
DROP INDEX publications_site;
ALTER TABLE publications DROP COLUMN site_excluded;
