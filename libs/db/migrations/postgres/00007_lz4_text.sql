-- +goose Up
-- A note's Markdown and its rendered HTML are kilobytes each, so Postgres compresses them
-- on every write. lz4 does that several times faster than the default pglz, at a similar
-- ratio for text, which is most of the CPU a publish costs Postgres. Values already
-- stored keep their compression until rewritten. (Needs Postgres 14 or later built with
-- lz4, as the Debian packages and the official images are.)
ALTER TABLE publications ALTER COLUMN content SET COMPRESSION lz4, ALTER COLUMN html SET COMPRESSION lz4;
ALTER TABLE versions ALTER COLUMN content SET COMPRESSION lz4;

-- +goose Down
ALTER TABLE versions ALTER COLUMN content SET COMPRESSION pglz;
ALTER TABLE publications ALTER COLUMN content SET COMPRESSION pglz, ALTER COLUMN html SET COMPRESSION pglz;
