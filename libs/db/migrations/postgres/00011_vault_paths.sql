-- +goose Up
-- Notes from a vault link to each other by file name. path is where a note lives in its
-- author's vault, unique among the account's publications that are not unpublished
-- (path_key, its match key: NFC and Unicode case folding, computed by the service so that
-- both databases agree). note_names is the link index: each publication's names that a
-- link can match (kind 1 path, 2 base name, 3 alias, 4 title of a note without a path)
-- by match key, with what picking among several needs (the publication's path, creation
-- and expiry), so that resolving a note's links reads this table alone. names_version
-- says which rules made a publication's rows, and rows below the current one are
-- indexed again in the background (the publish target's names job),
-- so existing notes are indexed without a Go step here. render_outline is the render's
-- headings and block ids (JSON), for the anchors of links into the note.
ALTER TABLE publications ADD COLUMN path TEXT;
ALTER TABLE publications ADD COLUMN path_key TEXT;
ALTER TABLE publications ADD COLUMN render_outline TEXT NOT NULL DEFAULT '';
ALTER TABLE publications ADD COLUMN names_version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE versions ADD COLUMN path TEXT;
CREATE UNIQUE INDEX publications_path ON publications (account_cuid, path_key) WHERE path_key IS NOT NULL AND NOT unpublished;
CREATE INDEX publications_names_version ON publications (names_version);
CREATE TABLE note_names (
    publication_cuid TEXT NOT NULL REFERENCES publications (cuid) ON DELETE CASCADE,
    account_cuid     TEXT NOT NULL,
    kind             SMALLINT NOT NULL,
    key              TEXT NOT NULL,
    path             TEXT,
    created_ms       BIGINT NOT NULL,
    expires_at       TIMESTAMPTZ,
    PRIMARY KEY (publication_cuid, kind, key)
);
CREATE INDEX note_names_key ON note_names (account_cuid, key);
DROP INDEX publications_title;

-- +goose Down
CREATE INDEX publications_title ON publications (account_cuid, title);
DROP TABLE note_names;
DROP INDEX publications_names_version;
DROP INDEX publications_path;
ALTER TABLE versions DROP COLUMN path;
ALTER TABLE publications DROP COLUMN names_version;
ALTER TABLE publications DROP COLUMN render_outline;
ALTER TABLE publications DROP COLUMN path_key;
ALTER TABLE publications DROP COLUMN path;
