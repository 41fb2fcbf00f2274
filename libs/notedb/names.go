package notedb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"strings"
	"time"

	"github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/note"
	"gorm.io/gorm"
)

// nameRow is a row of the link index: one name of a publication (note.Text.Names), with
// what picking among several publications of one name needs.
type nameRow struct {
	PublicationCUID string        `gorm:"column:publication_cuid;primaryKey"`
	AccountCUID     string        `gorm:"column:account_cuid"`
	Kind            note.NameKind `gorm:"primaryKey"`
	Key             string        `gorm:"primaryKey"`
	Path            *string
	CreatedMS       int64 `gorm:"column:created_ms"`
	ExpiresAt       *time.Time
}

func (nameRow) TableName() string { return "note_names" }

// writeNames replaces p's rows of the link index with its names and its link keys.
func writeNames(tx *gorm.DB, p note.Publication) error {
	if err := tx.Where("publication_cuid = ?", p.CUID).Delete(&nameRow{}).Error; err != nil {
		return err
	}
	if names := nameRows(p); len(names) > 0 {
		if err := tx.Create(&names).Error; err != nil {
			return err
		}
	}
	return writeLinks(tx, p)
}

// linkRow is a row of the link keys: a key by which one of the publication's links
// looks up its target (note.Publication.LinkKeys), for the backlinks of the notes it
// may name.
type linkRow struct {
	PublicationCUID string `gorm:"column:publication_cuid;primaryKey"`
	AccountCUID     string `gorm:"column:account_cuid"`
	Key             string `gorm:"primaryKey"`
}

func (linkRow) TableName() string { return "note_links" }

// linkRows are p's rows of the link keys: none for an unpublished publication.
func linkRows(p note.Publication) []linkRow {
	if p.Unpublished {
		return nil
	}
	keys := p.LinkKeys()
	rows := make([]linkRow, len(keys))
	for i, k := range keys {
		rows[i] = linkRow{PublicationCUID: p.CUID, AccountCUID: p.AccountCUID, Key: k}
	}
	return rows
}

// writeLinks replaces p's rows of the link keys.
func writeLinks(tx *gorm.DB, p note.Publication) error {
	if err := tx.Where("publication_cuid = ?", p.CUID).Delete(&linkRow{}).Error; err != nil {
		return err
	}
	if rows := linkRows(p); len(rows) > 0 {
		return tx.Create(&rows).Error
	}
	return nil
}

// nameRows are p's rows of the link index: none for an unpublished publication.
func nameRows(p note.Publication) []nameRow {
	if p.Unpublished {
		return nil
	}
	names := p.Names()
	rows := make([]nameRow, len(names))
	for i, n := range names {
		rows[i] = nameRow{PublicationCUID: p.CUID, AccountCUID: p.AccountCUID, Kind: n.Kind, Key: n.Key, Path: p.Path,
			CreatedMS: p.CreatedAt.UnixMilli(), ExpiresAt: p.ExpiresAt}
	}
	return rows
}

// checkPathFree fails with a *note.PathTakenError when another of the account's
// publications that is not unpublished has p's path (by match key). The unique index
// publications_path holds it under concurrent writes; this names the holder.
func checkPathFree(tx *gorm.DB, p note.Publication) error {
	if p.Path == nil {
		return nil
	}
	var holder string
	err := tx.Model(&publicationRow{}).Select("cuid").
		Where("account_cuid = ? AND path_key = ? AND NOT unpublished AND cuid <> ?", p.AccountCUID, note.MatchKey(*p.Path), p.CUID).
		Take(&holder).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return nil
	case err != nil:
		return err
	}
	return &note.PathTakenError{Path: *p.Path, Holder: holder}
}

// ResolveNames implements note.LinkStore.
func (s *Reads) ResolveNames(ctx context.Context, accountCUID string, keys []string, now time.Time) ([]note.NameHit, error) {
	return resolveNames(s.db.WithContext(ctx), accountCUID, keys, now)
}

// resolveNames is ResolveNames on tx (the store's handle, or a transaction's): one
// query of the link index by (account, key), reading no publication, each key one probe
// of note_names_key however many notes the author has.
func resolveNames(tx *gorm.DB, accountCUID string, keys []string, now time.Time) ([]note.NameHit, error) {
	const columns = "publication_cuid, kind, key, path, created_ms, expires_at"
	var rows *sql.Rows
	var err error
	if tx.Dialector.Name() == "postgres" {
		// The keys are one array parameter. The LIMIT keeps the planner from flattening
		// the lookup into a hash join over all the author's rows, which it costs lower
		// from about 10,000 notes on and which is several times slower: one index
		// probe per key. No key names anywhere near that many notes.
		rows, err = tx.Raw("SELECT n.* FROM unnest(?::text[]) AS k(key) CROSS JOIN LATERAL "+
			"(SELECT "+columns+" FROM note_names m WHERE m.account_cuid = ? AND m.key = k.key LIMIT 1000000) n",
			textArray(keys), accountCUID).Rows()
	} else {
		rows, err = tx.Raw("SELECT "+columns+" FROM note_names WHERE account_cuid = ? AND key IN ?", accountCUID, keys).Rows()
	}
	if err != nil {
		return nil, db.Classify(err)
	}
	defer rows.Close()
	// Scanned by hand: a link-heavy note reads hundreds of rows, and gorm's scan by
	// reflection took twice the allocations.
	var hits []note.NameHit
	for rows.Next() {
		var h note.NameHit
		var path sql.NullString
		var createdMS int64
		var expires sql.NullTime
		if err := rows.Scan(&h.CUID, &h.Kind, &h.Key, &path, &createdMS, &expires); err != nil {
			return nil, db.Classify(err)
		}
		if expires.Valid && !now.Before(expires.Time) {
			continue
		}
		h.Path, h.CreatedAt = path.String, time.UnixMilli(createdMS).UTC()
		if expires.Valid {
			h.ExpiresAt = utc(&expires.Time)
		}
		hits = append(hits, h)
	}
	return hits, db.Classify(rows.Err())
}

// Outlines implements note.LinkStore.
func (s *Reads) Outlines(ctx context.Context, cuids []string) (map[string]string, error) {
	var rows []struct {
		CUID          string `gorm:"column:cuid"`
		RenderOutline string
	}
	err := s.db.WithContext(ctx).Model(&publicationRow{}).Select("cuid, render_outline").Where("cuid IN ?", cuids).Scan(&rows).Error
	if err != nil {
		return nil, db.Classify(err)
	}
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		out[r.CUID] = r.RenderOutline
	}
	return out, nil
}

// IndexNames implements note.RenderStore: it writes the link index rows of up to limit
// publications whose rows an older version of the rules wrote (or none: those published
// before the index), and returns their accounts.
func (s *Store) IndexNames(ctx context.Context, limit int) ([]string, error) {
	var accounts []string
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var rows []publicationRow
		if err := tx.Where("names_version < ? AND NOT unpublished", note.NamesVersion).Limit(limit).Find(&rows).Error; err != nil {
			return err
		}
		for _, r := range rows {
			p, err := fromRow(r)
			if err != nil {
				return err
			}
			if err := writeNames(tx, p); err != nil {
				return err
			}
			if err := tx.Model(&publicationRow{}).Where("cuid = ?", r.CUID).Update("names_version", note.NamesVersion).Error; err != nil {
				return err
			}
			accounts = append(accounts, r.AccountCUID)
			if err := s.outbox.Write(tx, note.IndexChange(r.AccountCUID)); err != nil {
				return err
			}
		}
		return nil
	})
	return accounts, db.Classify(err)
}

// textArray is a Postgres text[] parameter: one value, where gorm would expand a slice
// into a parameter per element.
type textArray []string

// Value implements driver.Valuer: the array's literal, each element quoted.
func (a textArray) Value() (driver.Value, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, s := range a {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		for _, r := range s {
			if r == '"' || r == '\\' {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String(), nil
}
