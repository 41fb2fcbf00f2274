-- +goose Up
-- Rendering moves from every page view to every change: html is the note body rendered
-- and sanitized by render_version of the renderer (0: not rendered yet; the first read
-- renders it once and stores it). etag is the publication's validator for If-Match: a
-- new value with every change its owner makes, and only then.
ALTER TABLE publications ADD COLUMN html TEXT NOT NULL DEFAULT '';
ALTER TABLE publications ADD COLUMN render_version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE publications ADD COLUMN etag TEXT NOT NULL DEFAULT '';
UPDATE publications SET etag = substr(md5(random()::text || cuid), 1, 24);

-- +goose Down
ALTER TABLE publications DROP COLUMN etag;
ALTER TABLE publications DROP COLUMN render_version;
ALTER TABLE publications DROP COLUMN html;
