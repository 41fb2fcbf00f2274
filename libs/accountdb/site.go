package accountdb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/site"
)

var _ site.SettingsStore = (*Store)(nil)

// siteRow is a row of sites.
type siteRow struct {
	AccountCUID string `gorm:"column:account_cuid;primaryKey"`
	Enabled     bool
	Handle      *string
	Roots       string
	Home        *string
	Title       *string
}

func (siteRow) TableName() string { return "sites" }

// handleRow is a row of site_handles.
type handleRow struct {
	Handle      string `gorm:"primaryKey"`
	AccountCUID string `gorm:"column:account_cuid"`
	CreatedMS   int64  `gorm:"column:created_ms"`
}

func (handleRow) TableName() string { return "site_handles" }

func (r siteRow) settings() (site.Settings, error) {
	s := site.Settings{Enabled: r.Enabled, Handle: r.Handle, Home: r.Home, Title: r.Title}
	if err := json.Unmarshal([]byte(r.Roots), &s.Roots); err != nil {
		return site.Settings{}, fmt.Errorf("read the roots of site %s: %w", r.AccountCUID, err)
	}
	return s, nil
}

// Site implements site.SettingsStore.
func (s *Store) Site(ctx context.Context, accountCUID string) (site.Settings, error) {
	return readSite(s.db.WithContext(ctx), accountCUID)
}

// readSite reads the account's site settings through tx: the defaults without a row.
func readSite(tx *gorm.DB, accountCUID string) (site.Settings, error) {
	var row siteRow
	err := tx.Where("account_cuid = ?", accountCUID).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return site.Settings{}, nil
	}
	if err != nil {
		return site.Settings{}, db.Classify(err)
	}
	return row.settings()
}

// ChangeSite implements site.SettingsStore, under the account's lock (lockAccount). A
// new handle is inserted into site_handles, where it stays; one that another account
// holds or held there is ErrHandleTaken. The change writes its note.Change (every read of
// the account, hard: the site's purges are) in the same transaction.
func (s *Store) ChangeSite(ctx context.Context, accountCUID string, change func(site.Settings) (site.Settings, error)) (before, after site.Settings, err error) {
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if _, err := lockAccount(tx, accountCUID); err != nil {
			return err
		}
		if before, err = readSite(tx, accountCUID); err != nil {
			return err
		}
		if after, err = change(before); err != nil {
			return err
		}
		if after.Handle != nil {
			if err := claimHandle(tx, *after.Handle, accountCUID); err != nil {
				return err
			}
		}
		roots, err := json.Marshal(append([]string{}, after.Roots...))
		if err != nil {
			return err
		}
		row := siteRow{AccountCUID: accountCUID, Enabled: after.Enabled, Handle: after.Handle, Roots: string(roots), Home: after.Home, Title: after.Title}
		if err := tx.Clauses(clause.OnConflict{UpdateAll: true}).Create(&row).Error; err != nil {
			return err
		}
		return s.outbox.Write(tx, note.Change{Account: accountCUID, Hard: true})
	})
	if err != nil {
		return site.Settings{}, site.Settings{}, db.Classify(err)
	}
	return before, after, nil
}

// claimHandle takes handle for the account in tx, unless another account holds or held
// it: ErrHandleTaken.
func claimHandle(tx *gorm.DB, handle, accountCUID string) error {
	if err := tx.Clauses(clause.OnConflict{DoNothing: true}).
		Create(&handleRow{Handle: handle, AccountCUID: accountCUID, CreatedMS: time.Now().UnixMilli()}).Error; err != nil {
		return err
	}
	var holder handleRow
	if err := tx.Where("handle = ?", handle).Take(&holder).Error; err != nil {
		return err
	}
	if holder.AccountCUID != accountCUID {
		return site.ErrHandleTaken
	}
	return nil
}

// ReleaseHandle implements site.SettingsStore.
func (s *Store) ReleaseHandle(ctx context.Context, handle string) error {
	return db.Classify(s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var inUse int64
		if err := tx.Model(&siteRow{}).Where("handle = ?", handle).Count(&inUse).Error; err != nil {
			return err
		}
		if inUse > 0 {
			return site.ErrHandleInUse
		}
		res := tx.Where("handle = ?", handle).Delete(&handleRow{})
		if res.Error == nil && res.RowsAffected == 0 {
			return site.ErrNoHandle
		}
		return res.Error
	}))
}

// HandleHolder implements site.SettingsStore.
func (s *Store) HandleHolder(ctx context.Context, handle string) (string, error) {
	var holder []string
	if err := s.db.WithContext(ctx).Model(&handleRow{}).Where("handle = ?", handle).Pluck("account_cuid", &holder).Error; err != nil {
		return "", db.Classify(err)
	}
	if len(holder) == 0 {
		return "", nil
	}
	return holder[0], nil
}
