-- +goose Up
-- The reaper looks for unpublished notes to purge: a partial index keeps that scan to
-- the unpublished rows, however many are published.
CREATE INDEX publications_unpublished ON publications (cuid) WHERE unpublished;

-- +goose Down
DROP INDEX publications_unpublished;
