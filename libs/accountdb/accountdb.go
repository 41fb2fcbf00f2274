// Package accountdb stores accounts, licenses, activations and sessions with gorm, on
// Postgres or SQLite.
package accountdb

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/outbox"
)

var _ account.Storer = (*Store)(nil)

// Store implements account.Storer.
type Store struct {
	db *gorm.DB
	// outbox writes the change of each settings change in its transaction.
	outbox *outbox.Writer
}

// New returns a Store on gdb whose settings changes w writes.
func New(gdb *gorm.DB, w *outbox.Writer) *Store { return &Store{db: gdb, outbox: w} }

type accountRow struct {
	CUID        string `gorm:"column:cuid;primaryKey"`
	Name        string
	Email       string
	DisplayName string
	CreatedAt   time.Time
}

func (accountRow) TableName() string { return "accounts" }

type licenseRow struct {
	ID          int64 `gorm:"primaryKey"`
	KeyHash     string
	AccountCUID string `gorm:"column:account_cuid"`
	Active      bool
	CreatedAt   time.Time
}

func (licenseRow) TableName() string { return "licenses" }

type activationRow struct {
	ID           int64 `gorm:"primaryKey"`
	LicenseID    int64
	InstanceHash string
	CreatedAt    time.Time
}

func (activationRow) TableName() string { return "activations" }

type sessionRow struct {
	TokenHash   string `gorm:"primaryKey"`
	LicenseID   int64
	AccountCUID string `gorm:"column:account_cuid"`
	CreatedAt   time.Time
	ExpiresAt   time.Time
	// ExpiresMS is ExpiresAt in Unix milliseconds, the form SQL compares (see libs/db).
	ExpiresMS int64 `gorm:"column:expires_ms"`
}

func (sessionRow) TableName() string { return "sessions" }

// CreateLicense implements account.Storer.
func (s *Store) CreateLicense(ctx context.Context, a account.Account, keyHash, instanceHash string) error {
	return db.Classify(s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&accountRow{CUID: a.CUID, Name: a.Name, Email: a.Email, DisplayName: a.Name, CreatedAt: a.CreatedAt}).Error; err != nil {
			return err
		}
		lic := licenseRow{KeyHash: keyHash, AccountCUID: a.CUID, Active: true, CreatedAt: a.CreatedAt}
		if err := tx.Create(&lic).Error; err != nil {
			return err
		}
		return tx.Create(&activationRow{LicenseID: lic.ID, InstanceHash: instanceHash, CreatedAt: a.CreatedAt}).Error
	}))
}

// AddActivation implements account.Storer. Adding an activation that exists already is a
// no-op, so the operator command can be repeated safely.
func (s *Store) AddActivation(ctx context.Context, keyHash, instanceHash string, now time.Time) (account.Account, error) {
	var a account.Account
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var lic licenseRow
		if err := tx.Where("key_hash = ?", keyHash).Take(&lic).Error; err != nil {
			return notFound(err)
		}
		row := activationRow{LicenseID: lic.ID, InstanceHash: instanceHash, CreatedAt: now}
		if err := tx.Where(activationRow{LicenseID: lic.ID, InstanceHash: instanceHash}).FirstOrCreate(&row).Error; err != nil {
			return err
		}
		var err error
		a, err = s.account(tx, lic.AccountCUID)
		return err
	})
	return a, db.Classify(err)
}

// DeactivateLicense implements account.Storer.
func (s *Store) DeactivateLicense(ctx context.Context, keyHash string) (string, error) {
	var lic licenseRow
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("key_hash = ?", keyHash).Take(&lic).Error; err != nil {
			return notFound(err)
		}
		return tx.Model(&licenseRow{}).Where("id = ?", lic.ID).Update("active", false).Error
	})
	if err != nil {
		return "", db.Classify(err)
	}
	return lic.AccountCUID, nil
}

// FindActivation implements account.Storer.
func (s *Store) FindActivation(ctx context.Context, keyHash, instanceHash string) (account.Activation, error) {
	var row struct {
		LicenseID    int64
		KeyHash      string
		InstanceHash string
		AccountCUID  string `gorm:"column:account_cuid"`
	}
	err := s.db.WithContext(ctx).Table("licenses l").
		Select("l.id AS license_id, l.key_hash, a.instance_hash, l.account_cuid").
		Joins("JOIN activations a ON a.license_id = l.id").
		Where("l.key_hash = ? AND a.instance_hash = ? AND l.active", keyHash, instanceHash).
		Take(&row).Error
	if err != nil {
		return account.Activation{}, db.Classify(notFound(err))
	}
	acc, err := s.account(s.db.WithContext(ctx), row.AccountCUID)
	if err != nil {
		return account.Activation{}, db.Classify(err)
	}
	return account.Activation{LicenseID: row.LicenseID, KeyHash: row.KeyHash, InstanceHash: row.InstanceHash, Account: acc}, nil
}

// CreateSession implements account.Storer.
func (s *Store) CreateSession(ctx context.Context, sess account.Session) error {
	return db.Classify(s.db.WithContext(ctx).Create(&sessionRow{TokenHash: sess.TokenHash, LicenseID: sess.LicenseID,
		AccountCUID: sess.AccountCUID, CreatedAt: sess.CreatedAt, ExpiresAt: sess.ExpiresAt, ExpiresMS: sess.ExpiresAt.UnixMilli()}).Error)
}

// PurgeSessions deletes sessions that expired before now, at most batch per statement,
// and returns how many it deleted. Expired tokens already answer 401; this only keeps the
// table from growing with every login.
func (s *Store) PurgeSessions(ctx context.Context, now time.Time, batch int) (int64, error) {
	var total int64
	for {
		res := s.db.WithContext(ctx).Exec("DELETE FROM sessions WHERE token_hash IN (SELECT token_hash FROM sessions WHERE expires_ms <= ? LIMIT ?)",
			now.UnixMilli(), batch)
		if res.Error != nil {
			return total, db.Classify(res.Error)
		}
		total += res.RowsAffected
		if res.RowsAffected < int64(batch) {
			return total, nil
		}
	}
}

// FindSession implements account.Storer.
func (s *Store) FindSession(ctx context.Context, tokenHash string) (account.Session, error) {
	var row sessionRow
	err := s.db.WithContext(ctx).Table("sessions s").
		Select("s.*").
		Joins("JOIN licenses l ON l.id = s.license_id").
		Where("s.token_hash = ? AND l.active", tokenHash).
		Take(&row).Error
	if err != nil {
		return account.Session{}, db.Classify(notFound(err))
	}
	return account.Session{TokenHash: row.TokenHash, LicenseID: row.LicenseID, AccountCUID: row.AccountCUID,
		CreatedAt: row.CreatedAt, ExpiresAt: row.ExpiresAt}, nil
}

func (s *Store) account(tx *gorm.DB, cuid string) (account.Account, error) {
	var row accountRow
	if err := tx.Where("cuid = ?", cuid).Take(&row).Error; err != nil {
		return account.Account{}, notFound(err)
	}
	return account.Account{CUID: row.CUID, Name: row.Name, Email: row.Email, CreatedAt: row.CreatedAt}, nil
}

func notFound(err error) error {
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return account.ErrNotFound
	}
	return err
}

var _ account.SettingsStorer = (*Store)(nil)

type settingsRow struct {
	Name           string
	DisplayName    string
	ShowAuthor     bool
	Theme          string
	AccentColor    string
	Font           string
	Indexable      bool
	ImageBytesUsed int64
}

// Profile implements account.SettingsStorer.
func (s *Store) Profile(ctx context.Context, accountCUID string) (string, account.Profile, error) {
	var row settingsRow
	err := s.db.WithContext(ctx).Table("accounts").Where("cuid = ?", accountCUID).Take(&row).Error
	if err != nil {
		return "", account.Profile{}, db.Classify(notFound(err))
	}
	name, p := row.profile()
	return name, p, nil
}

func (r settingsRow) profile() (name string, p account.Profile) {
	return r.Name, account.Profile{
		Settings: account.Settings{Name: r.DisplayName, ShowAuthor: r.ShowAuthor, Theme: r.Theme,
			AccentColor: r.AccentColor, Font: r.Font, Indexable: r.Indexable},
		Storage: account.Storage{ImageBytesUsed: r.ImageBytesUsed},
	}
}

// lockAccount reads the account's settings in tx holding its lock until tx ends. On
// Postgres the read takes the account's row lock (SELECT … FOR UPDATE): a concurrent
// change waits for this one to commit and then reads its result, instead of saving fields
// read before it. SQLite has no row locks; there tx began holding the database's write
// lock (libs/db opens it with IMMEDIATE transactions), so no other writer, of this
// process or another such as the CLI, can come between the read and the save.
func lockAccount(tx *gorm.DB, accountCUID string) (settingsRow, error) {
	read := tx.Table("accounts").Where("cuid = ?", accountCUID)
	if db.Dialect(tx) == db.Postgres {
		read = read.Clauses(clause.Locking{Strength: "UPDATE"})
	}
	var row settingsRow
	return row, notFound(read.Take(&row).Error)
}

// ChangeSettings implements account.SettingsStorer: the read of the settings and their
// save are one transaction under the account's lock (lockAccount).
func (s *Store) ChangeSettings(ctx context.Context, accountCUID string, change func(string, account.Profile) (account.Settings, error)) (account.Profile, error) {
	var out account.Profile
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		row, err := lockAccount(tx, accountCUID)
		if err != nil {
			return err
		}
		name, p := row.profile()
		st, err := change(name, p)
		if err != nil {
			return err
		}
		if err := tx.Table("accounts").Where("cuid = ?", accountCUID).Updates(map[string]any{
			"display_name": st.Name, "show_author": st.ShowAuthor, "theme": st.Theme,
			"accent_color": st.AccentColor, "font": st.Font, "indexable": st.Indexable,
		}).Error; err != nil {
			return err
		}
		// Every read of the account, hard when the author is hidden: never served from the
		// edge's grace (libs/edge's package doc).
		hidden := p.Settings.ShowAuthor && !st.ShowAuthor
		p.Settings = st
		out = p
		return s.outbox.Write(tx, note.Change{Account: accountCUID, Hard: hidden})
	})
	if err != nil {
		return account.Profile{}, db.Classify(err)
	}
	return out, nil
}
