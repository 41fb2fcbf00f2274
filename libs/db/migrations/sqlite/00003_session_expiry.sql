-- +goose Up
-- The expiry of a session as Unix milliseconds: an integer both dialects compare alike
-- (SQLite keeps timestamps as variable-width text), so expired sessions can be purged in SQL.
ALTER TABLE sessions ADD COLUMN expires_ms BIGINT NOT NULL DEFAULT 0;
UPDATE sessions SET expires_ms = CAST(ROUND((julianday(expires_at) - 2440587.5) * 86400000) AS INTEGER);
CREATE INDEX sessions_expires_ms ON sessions (expires_ms);

-- +goose Down
DROP INDEX sessions_expires_ms;
ALTER TABLE sessions DROP COLUMN expires_ms;
