-- +goose Up
-- A note's page depends on the author's other notes that its wikilinks name. note_links
-- holds the titles each published note's last render linked to, so that publishing,
-- retitling or unsharing a note finds, by index, the author's notes to render again.
-- An unpublished note's links are deleted with it. render_id names each stored render:
-- a render that only other notes caused keeps the etag and the render version, and the
-- page's validator must still change; a render saved on top of a read compares it.
-- links_expire_at is the earliest expiry of the notes the render links to: the render
-- is stale from then on.
CREATE TABLE note_links (
    note_cuid    TEXT NOT NULL,
    account_cuid TEXT NOT NULL,
    title        TEXT NOT NULL,
    PRIMARY KEY (note_cuid, title)
);
CREATE INDEX note_links_title ON note_links (account_cuid, title);
ALTER TABLE publications ADD COLUMN render_id TEXT NOT NULL DEFAULT '';
ALTER TABLE publications ADD COLUMN links_expire_at TIMESTAMPTZ;

-- +goose Down
ALTER TABLE publications DROP COLUMN links_expire_at;
ALTER TABLE publications DROP COLUMN render_id;
DROP TABLE note_links;
