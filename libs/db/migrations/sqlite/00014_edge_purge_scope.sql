-- +goose Up
-- scope is which keys of the note a purge drops (libs/edge.Scope): 0 its content and
-- reference keys, 1 its content key alone. Rows written before it drop both, which is
-- what their single note key stood for.
ALTER TABLE edge_purges ADD COLUMN scope SMALLINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE edge_purges DROP COLUMN scope;
