-- +goose Up
-- The outbox of changes to public reads (libs/outbox): every change that alters a public
-- read writes one row in its own transaction, as the domain decided it (note.Change: the
-- note, '' for every read of the account; whether what links to it show changed, whether
-- the purge is hard, whether the account's names or the note's anchors changed). Two
-- readers take it from there, each with its own due time (NULL: nothing left for it): the
-- change feed's relay announces it to every process's caches (feed_due_ms), the edge's
-- purge worker purges the edges of it, twice (edge_due_ms, edge_sends; NULL when no edge
-- is configured). A reader's claim moves its due time past the claim's lease; a row is
-- deleted when neither reader has anything left of it. origin is the change feed origin
-- of the process that committed it, which told its own caches at once.
CREATE TABLE changes (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    account_cuid TEXT NOT NULL,
    note_cuid    TEXT NOT NULL DEFAULT '',
    refs         BOOLEAN NOT NULL DEFAULT FALSE,
    hard         BOOLEAN NOT NULL DEFAULT FALSE,
    names        BOOLEAN NOT NULL DEFAULT FALSE,
    anchors      BOOLEAN NOT NULL DEFAULT FALSE,
    origin       TEXT NOT NULL DEFAULT '',
    created_ms   BIGINT NOT NULL,
    feed_due_ms  BIGINT,
    edge_due_ms  BIGINT,
    edge_sends   SMALLINT NOT NULL DEFAULT 0
);
CREATE INDEX changes_feed_due ON changes (feed_due_ms) WHERE feed_due_ms IS NOT NULL;
CREATE INDEX changes_edge_due ON changes (edge_due_ms) WHERE edge_due_ms IS NOT NULL;
-- The edge purges not yet sent stay due for the edge: a row of a note (scope 0 dropped
-- its reference key too), or of every read of the account. The feed announced them.
INSERT INTO changes (account_cuid, note_cuid, refs, hard, created_ms, edge_due_ms, edge_sends)
SELECT account_cuid, note_cuid, scope = 0, hard, created_ms, due_ms, sends FROM edge_purges;
DROP TABLE edge_purges;

-- +goose Down
CREATE TABLE edge_purges (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    account_cuid TEXT NOT NULL,
    note_cuid    TEXT NOT NULL DEFAULT '',
    hard         BOOLEAN NOT NULL DEFAULT FALSE,
    created_ms   BIGINT NOT NULL,
    due_ms       BIGINT NOT NULL,
    sends        SMALLINT NOT NULL DEFAULT 0,
    scope        SMALLINT NOT NULL DEFAULT 0
);
CREATE INDEX edge_purges_due ON edge_purges (due_ms);
INSERT INTO edge_purges (account_cuid, note_cuid, hard, created_ms, due_ms, sends, scope)
SELECT account_cuid, note_cuid, hard, created_ms, edge_due_ms, edge_sends, CASE WHEN refs THEN 0 ELSE 1 END
FROM changes WHERE edge_due_ms IS NOT NULL;
INSERT INTO edge_purges (account_cuid, hard, created_ms, due_ms)
SELECT account_cuid, FALSE, created_ms, edge_due_ms FROM changes WHERE edge_due_ms IS NOT NULL AND names AND note_cuid <> '';
DROP TABLE changes;
