-- +goose Up
-- A note's render depends on that note only. Its wikilinks are kept in html as
-- placeholders, and render_links lists them (JSON: the placeholders' nonce and each
-- link's title and heading): a page resolves them among the author's active notes when
-- it is built, so no note is rendered again because another changed, and note_links and
-- links_expire_at go. publications_title finds a title's notes by index.
-- render_tries counts the temporary renders of the current content (plain text, for a
-- busy renderer or a missed time bound; the background renders it again, backing off),
-- render_misses those that missed the note's own time bound with a render slot to
-- themselves (two make the plain text final), and render_retry_ms is when the
-- background renderer may next take a publication whose render is missing, temporary
-- or from an older renderer (render_version below the current one): a claim moves it
-- a lease ahead, so that one replica renders it.
DROP TABLE note_links;
ALTER TABLE publications DROP COLUMN links_expire_at;
ALTER TABLE publications ADD COLUMN render_links TEXT NOT NULL DEFAULT '';
ALTER TABLE publications ADD COLUMN render_tries INTEGER NOT NULL DEFAULT 0;
ALTER TABLE publications ADD COLUMN render_misses INTEGER NOT NULL DEFAULT 0;
ALTER TABLE publications ADD COLUMN render_retry_ms BIGINT NOT NULL DEFAULT 0;
CREATE INDEX publications_title ON publications (account_cuid, title);
CREATE INDEX publications_render_version ON publications (render_version);

-- +goose Down
DROP INDEX publications_render_version;
DROP INDEX publications_title;
ALTER TABLE publications DROP COLUMN render_retry_ms;
ALTER TABLE publications DROP COLUMN render_misses;
ALTER TABLE publications DROP COLUMN render_tries;
ALTER TABLE publications DROP COLUMN render_links;
ALTER TABLE publications ADD COLUMN links_expire_at TIMESTAMPTZ;
CREATE TABLE note_links (
    note_cuid    TEXT NOT NULL,
    account_cuid TEXT NOT NULL,
    title        TEXT NOT NULL,
    PRIMARY KEY (note_cuid, title)
);
CREATE INDEX note_links_title ON note_links (account_cuid, title);
-- The renders keep their placeholders: mark them stale for the old renderer.
UPDATE publications SET render_version = 0;
