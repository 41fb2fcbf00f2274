-- +goose Up
-- The expiry of a session as Unix milliseconds: an integer both dialects compare alike
-- (SQLite keeps timestamps as variable-width text), so expired sessions can be purged in SQL.
ALTER TABLE sessions ADD COLUMN expires_ms BIGINT NOT NULL DEFAULT 0;
UPDATE sessions SET expires_ms = CAST(EXTRACT(EPOCH FROM expires_at) * 1000 AS BIGINT);
CREATE INDEX sessions_expires_ms ON sessions (expires_ms);

-- +goose Down
DROP INDEX sessions_expires_ms;
ALTER TABLE sessions DROP COLUMN expires_ms;
