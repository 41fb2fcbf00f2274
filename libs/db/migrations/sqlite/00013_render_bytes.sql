-- +goose Up
-- html_bytes is the length of html in bytes, written with it, so that a page sizes the
-- renders it embeds without reading them and reads only those within its allowance
-- (libs/note/embeds.go).
ALTER TABLE publications ADD COLUMN html_bytes INTEGER NOT NULL DEFAULT 0;
UPDATE publications SET html_bytes = length(CAST(html AS BLOB)) WHERE html <> '';

-- +goose Down
ALTER TABLE publications DROP COLUMN html_bytes;
