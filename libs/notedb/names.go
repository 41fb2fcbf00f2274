package notedb

import (
	"context"
	"errors"
	"time"

	"github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/note"
	"gorm.io/gorm"
)

// nameRow is a row of the link index: one name of a publication (note.Text.Names).
type nameRow struct {
	PublicationCUID string        `gorm:"column:publication_cuid;primaryKey"`
	AccountCUID     string        `gorm:"column:account_cuid"`
	Kind            note.NameKind `gorm:"primaryKey"`
	Key             string        `gorm:"primaryKey"`
}

func (nameRow) TableName() string { return "note_names" }

// writeNames replaces p's rows of the link index with its names.
func writeNames(tx *gorm.DB, p note.Publication) error {
	if err := tx.Where("publication_cuid = ?", p.CUID).Delete(&nameRow{}).Error; err != nil {
		return err
	}
	names := p.Names()
	if p.Unpublished || len(names) == 0 {
		return nil
	}
	rows := make([]nameRow, len(names))
	for i, n := range names {
		rows[i] = nameRow{PublicationCUID: p.CUID, AccountCUID: p.AccountCUID, Kind: n.Kind, Key: n.Key}
	}
	return tx.Create(&rows).Error
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

// ResolveNames implements note.Storer.
func (s *Store) ResolveNames(ctx context.Context, accountCUID string, keys []string, now time.Time) ([]note.NameHit, error) {
	return resolveNames(s.db.WithContext(ctx), accountCUID, keys, now)
}

// resolveNames is ResolveNames on tx (the store's handle, or a transaction's): one
// query of the link index by (account, key).
func resolveNames(tx *gorm.DB, accountCUID string, keys []string, now time.Time) ([]note.NameHit, error) {
	var rows []struct {
		Kind          note.NameKind
		Key           string
		CUID          string `gorm:"column:cuid"`
		Path          *string
		CreatedAt     time.Time
		ExpiresAt     *time.Time
		RenderOutline string
	}
	err := tx.Table("note_names n").
		Select("n.kind, n.key, p.cuid, p.path, p.created_at, p.expires_at, p.render_outline").
		Joins("JOIN publications p ON p.cuid = n.publication_cuid").
		Where("n.account_cuid = ? AND n.key IN ? AND NOT p.unpublished", accountCUID, keys).Scan(&rows).Error
	if err != nil {
		return nil, db.Classify(err)
	}
	hits := make([]note.NameHit, 0, len(rows))
	for _, r := range rows {
		if r.ExpiresAt != nil && !now.Before(*r.ExpiresAt) {
			continue
		}
		h := note.NameHit{Name: note.Name{Kind: r.Kind, Key: r.Key}, CUID: r.CUID, CreatedAt: r.CreatedAt.UTC(),
			ExpiresAt: utc(r.ExpiresAt), Outline: r.RenderOutline}
		if r.Path != nil {
			h.Path = *r.Path
		}
		hits = append(hits, h)
	}
	return hits, nil
}

// IndexNames implements note.Storer: it writes the link index rows of up to limit
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
		}
		return nil
	})
	return accounts, db.Classify(err)
}
