-- +goose Up
-- The number of an account's images that count toward its storage (those not released by
-- an unpublish), kept beside image_bytes_used so that the limit of images per account is
-- checked by the same one conditional UPDATE as the byte quota.
ALTER TABLE accounts ADD COLUMN image_count BIGINT NOT NULL DEFAULT 0 CHECK (image_count >= 0);
UPDATE accounts SET image_count = (SELECT COUNT(*) FROM images i WHERE i.account_cuid = accounts.cuid AND NOT i.released);

-- +goose Down
ALTER TABLE accounts DROP COLUMN image_count;
