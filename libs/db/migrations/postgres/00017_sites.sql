-- +goose Up
-- Sites (libs/site): an account's site settings, one row once it has changed them (none:
-- the defaults). roots is a JSON array of vault folders. handle is lowercase and unique.
CREATE TABLE sites (
    account_cuid TEXT PRIMARY KEY REFERENCES accounts (cuid),
    enabled      BOOLEAN NOT NULL DEFAULT FALSE,
    handle       TEXT UNIQUE,
    roots        TEXT NOT NULL DEFAULT '[]',
    home         TEXT,
    title        TEXT
);
-- Every handle an account has held, kept after it changes: a handle is never given to
-- another account (only `sharenote sites release-handle` deletes a row), and an old one's
-- URLs answer 301 to the account's current handle.
CREATE TABLE site_handles (
    handle       TEXT PRIMARY KEY,
    account_cuid TEXT NOT NULL REFERENCES accounts (cuid),
    created_ms   BIGINT NOT NULL
);
CREATE INDEX site_handles_account ON site_handles (account_cuid);

-- +goose Down
DROP TABLE site_handles;
DROP TABLE sites;
