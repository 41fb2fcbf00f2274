-- +goose Up
-- Image bytes move to the object store (SHARE_BLOB_URL) and stream there as a publish
-- (or a multipart PATCH) reads them, so their quota is reserved chunk by chunk before the
-- bytes are stored: one reservation per upload (id), charged to the account at once and
-- settled (deleted) with the rows that name the objects. The reaper releases one that
-- outlived its upload (expires_ms) and deletes the objects stored under
-- <account_cuid>/<note_cuid>/ that no image row names. The blobs table stays for the
-- images of earlier releases until `sharenote migrate` has copied them and a later
-- release drops it.
CREATE TABLE image_reservations (
    id           TEXT PRIMARY KEY,
    note_cuid    TEXT NOT NULL,
    account_cuid TEXT NOT NULL REFERENCES accounts (cuid),
    bytes        BIGINT NOT NULL,
    images       INTEGER NOT NULL,
    expires_ms   BIGINT NOT NULL
);
CREATE INDEX image_reservations_expiry ON image_reservations (expires_ms);
CREATE INDEX image_reservations_note ON image_reservations (note_cuid);

-- +goose Down
DROP TABLE image_reservations;
