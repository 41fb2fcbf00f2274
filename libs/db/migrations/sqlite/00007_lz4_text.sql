-- +goose Up
-- Postgres compresses the note text with lz4 from this version on; SQLite stores text
-- uncompressed, so there is nothing to change here. The version keeps both schemas in step.
SELECT 1;

-- +goose Down
SELECT 1;
