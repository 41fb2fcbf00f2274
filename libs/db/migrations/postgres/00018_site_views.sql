-- +goose Up
-- What the views of a site (libs/site) read of many notes at once, kept beside each
-- publication in the transaction that writes it.
-- site_excluded: the note's properties say `site: false` (site.Excluded).
ALTER TABLE publications ADD COLUMN site_excluded BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE publications SET site_excluded = TRUE WHERE properties IS NOT NULL AND properties::jsonb -> 'site' = 'false'::jsonb;
-- A site's folder listings read the account's paths under a folder by one range of the
-- paths' match keys, in byte order.
CREATE INDEX publications_site ON publications (account_cuid, path_key COLLATE "C") WHERE path_key IS NOT NULL AND NOT unpublished;
-- The link targets of each publication's render by match key (note.Publication.LinkKeys:
-- every key a link's target may be looked up by), for the backlinks of a note: the
-- publications with a link that may name it, then resolved by the rules of note links.
-- Written again by the names job (note.NamesVersion 2) for the publications before it.
CREATE TABLE note_links (
    publication_cuid TEXT NOT NULL REFERENCES publications (cuid) ON DELETE CASCADE,
    account_cuid     TEXT NOT NULL,
    key              TEXT NOT NULL,
    PRIMARY KEY (publication_cuid, key)
);
CREATE INDEX note_links_key ON note_links (account_cuid, key);

-- +goose Down
DROP TABLE note_links;
DROP INDEX publications_site;
ALTER TABLE publications DROP COLUMN site_excluded;
