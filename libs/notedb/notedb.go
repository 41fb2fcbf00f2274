// Package notedb stores publications, version snapshots and image metadata with gorm, on
// Postgres or SQLite; image bytes are in the object store (libs/blob).
package notedb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/blob"
	"github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/note"
)

var _ note.Storer = (*Store)(nil)

// Store implements note.Storer.
type Store struct {
	db    *gorm.DB
	blobs blob.Store
}

// New returns a Store on gdb whose images' bytes are in blobs.
func New(gdb *gorm.DB, blobs blob.Store) *Store { return &Store{db: gdb, blobs: blobs} }

// textColumns are a note's text (note.Text) as publications and versions store it: the
// properties as a JSON object.
type textColumns struct {
	Title          *string
	Summary        *string
	Content        string
	Properties     *string
	ShowProperties bool
	ExpiresAt      *time.Time
}

type publicationRow struct {
	CUID          string      `gorm:"column:cuid;primaryKey"`
	AccountCUID   string      `gorm:"column:account_cuid"`
	Text          textColumns `gorm:"embedded"`
	Unpublished   bool
	NextVersion   int64
	CreatedMS     int64     `gorm:"column:created_ms"`
	CreatedAt     time.Time `gorm:"autoCreateTime:false"`
	UpdatedAt     time.Time `gorm:"autoUpdateTime:false"`
	HTML          string    `gorm:"column:html"`
	RenderVersion int
	RenderID      string `gorm:"column:render_id"`
	RenderLinks   string `gorm:"column:render_links"`
	RenderTries   int
	RenderMisses  int
	RenderRetryMS int64  `gorm:"column:render_retry_ms"`
	ETag          string `gorm:"column:etag"`
}

func (publicationRow) TableName() string { return "publications" }

// ownerColumns are the owner's settings a public read shows, selected beside a
// publication's columns; ownerRow receives them.
const ownerColumns = "a.display_name AS owner_name, a.show_author AS owner_show_author, a.theme AS owner_theme, " +
	"a.accent_color AS owner_accent_color, a.font AS owner_font, a.indexable AS owner_indexable"

type ownerRow struct {
	OwnerName        string
	OwnerShowAuthor  bool
	OwnerTheme       string
	OwnerAccentColor string
	OwnerFont        string
	OwnerIndexable   bool
}

func (o ownerRow) settings() account.Settings {
	return account.Settings{Name: o.OwnerName, ShowAuthor: o.OwnerShowAuthor, Theme: o.OwnerTheme,
		AccentColor: o.OwnerAccentColor, Font: o.OwnerFont, Indexable: o.OwnerIndexable}
}

type versionRow struct {
	PublicationCUID string      `gorm:"column:publication_cuid;primaryKey"`
	Version         int64       `gorm:"primaryKey"`
	Text            textColumns `gorm:"embedded"`
	CreatedAt       time.Time   `gorm:"autoCreateTime:false"`
}

func (versionRow) TableName() string { return "versions" }

type imageRow struct {
	ID              int64  `gorm:"primaryKey"`
	AccountCUID     string `gorm:"column:account_cuid"`
	PublicationCUID string `gorm:"column:publication_cuid"`
	Filename        string
	MediaType       string
	Size            int64
	SHA256          string `gorm:"column:sha256"`
	BlobKey         string
	Released        bool
	CreatedAt       time.Time `gorm:"autoCreateTime:false"`
}

func (imageRow) TableName() string { return "images" }

// Create implements note.Storer.
func (s *Store) Create(ctx context.Context, p note.Publication, images []note.StoredImage, reservation string) error {
	row, err := toRow(p)
	if err != nil {
		return err
	}
	row.NextVersion = 1
	if len(images) == 0 {
		// One statement is atomic by itself: no transaction, two round trips fewer.
		return db.Classify(s.db.WithContext(ctx).Create(&row).Error)
	}
	return db.Classify(s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := settle(tx, reservation); err != nil {
			return err
		}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		return insertImages(tx, images)
	}))
}

// settle deletes the reservation of an upload whose rows tx is about to commit. It holds
// exactly the images' bytes and number: deleting it leaves them charged to the account
// for good. note.ErrUploadExpired when the reaper released it already.
func settle(tx *gorm.DB, reservation string) error {
	res := tx.Exec("DELETE FROM image_reservations WHERE id = ?", reservation)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return note.ErrUploadExpired
	}
	return nil
}

// insertImages adds the rows of stored images.
func insertImages(tx *gorm.DB, images []note.StoredImage) error {
	rows := make([]imageRow, len(images))
	for i, img := range images {
		rows[i] = imageRow{AccountCUID: img.AccountCUID, PublicationCUID: img.PublicationCUID, Filename: img.Filename,
			MediaType: img.MediaType, Size: img.Size, SHA256: img.SHA256, BlobKey: img.BlobKey, CreatedAt: img.CreatedAt}
	}
	return tx.Create(&rows).Error
}

// replaceImages releases the images of publication cuid that images replace (same
// name): like an unpublished note's, they leave the account's usage at once and the
// reaper deletes them. A released image is renamed to its blob key, which no served
// image can have ('/' is not allowed in filenames), so that its new namesake can take
// the name. Then it adds the rows of images.
func replaceImages(tx *gorm.DB, cuid, accountCUID string, images []note.StoredImage) error {
	for _, img := range images {
		var sizes []int64
		if err := tx.Raw("UPDATE images SET released = ?, filename = blob_key WHERE publication_cuid = ? AND filename = ? AND NOT released RETURNING size",
			true, cuid, img.Filename).Scan(&sizes).Error; err != nil {
			return err
		}
		for _, size := range sizes {
			if err := tx.Exec("UPDATE accounts SET image_bytes_used = image_bytes_used - ?, image_count = image_count - 1 WHERE cuid = ?",
				size, accountCUID).Error; err != nil {
				return err
			}
		}
	}
	return insertImages(tx, images)
}

// Reserve implements note.Storer. The account's usage is raised with one conditional
// UPDATE: under concurrency Postgres re-checks the condition after waiting for the row
// lock (and SQLite has one writer), so parallel uploads can never push the usage past
// quota nor the count past note.MaxImagesPerAccount. The count is a column beside the
// bytes rather than a COUNT of the image rows so that the check costs the same one row
// update at 10,000 images as at none. An upload that replaces images is charged by
// chargeReplacing instead.
func (s *Store) Reserve(ctx context.Context, id, noteCUID, accountCUID string, create bool, bytes int64, images int, replaces []string, quota int64, expires time.Time) error {
	return db.Classify(s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// The reservation first: adding to one the reaper released must fail before the
		// account is charged, and must not make it anew.
		if create {
			if err := tx.Exec("INSERT INTO image_reservations (id, note_cuid, account_cuid, bytes, images, expires_ms) VALUES (?, ?, ?, ?, ?, ?)",
				id, noteCUID, accountCUID, bytes, images, expires.UnixMilli()).Error; err != nil {
				return err
			}
		} else {
			res := tx.Exec("UPDATE image_reservations SET bytes = bytes + ?, images = images + ?, expires_ms = ? WHERE id = ?",
				bytes, images, expires.UnixMilli(), id)
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected == 0 {
				return note.ErrUploadExpired
			}
		}
		if len(replaces) > 0 {
			return chargeReplacing(tx, noteCUID, accountCUID, bytes, images, replaces, quota)
		}
		res := tx.Exec("UPDATE accounts SET image_bytes_used = image_bytes_used + ?, image_count = image_count + ? "+
			"WHERE cuid = ? AND image_bytes_used + ? <= ? AND image_count + ? <= ?",
			bytes, images, accountCUID, bytes, quota, images, note.MaxImagesPerAccount)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected > 0 {
			return nil
		}
		// Which limit refused it, for the message: the row is read again, so a concurrent
		// change can only make the answer name the other limit, never admit the bytes.
		var count int64
		if err := tx.Raw("SELECT image_count FROM accounts WHERE cuid = ?", accountCUID).Row().Scan(&count); err != nil {
			return err
		}
		if count+int64(images) > note.MaxImagesPerAccount {
			return &note.TooManyImagesError{Limit: note.MaxImagesPerAccount, PerAccount: true}
		}
		return note.ErrQuotaExceeded
	}))
}

// Release implements note.Storer.
func (s *Store) Release(ctx context.Context, id string) error {
	return db.Classify(s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		_, err := release(tx, "id = ?", id)
		return err
	}))
}

// reservation is a reservation that release deleted.
type reservation struct {
	NoteCUID    string `gorm:"column:note_cuid"`
	AccountCUID string `gorm:"column:account_cuid"`
	Bytes       int64
	Images      int64
}

// release deletes the reservations that where (with args) selects and takes their bytes
// and images off their accounts' usage, in tx.
func release(tx *gorm.DB, where string, args ...any) ([]reservation, error) {
	var rs []reservation
	if err := tx.Raw("DELETE FROM image_reservations WHERE "+where+" RETURNING note_cuid, account_cuid, bytes, images", args...).
		Scan(&rs).Error; err != nil {
		return nil, err
	}
	for _, r := range rs {
		if err := tx.Exec("UPDATE accounts SET image_bytes_used = image_bytes_used - ?, image_count = image_count - ? WHERE cuid = ?",
			r.Bytes, r.Images, r.AccountCUID).Error; err != nil {
			return nil, err
		}
	}
	return rs, nil
}

// FindView implements note.Storer.
func (s *Store) FindView(ctx context.Context, cuid string) (note.View, error) {
	var row struct {
		Pub   publicationRow `gorm:"embedded"`
		Owner ownerRow       `gorm:"embedded"`
	}
	err := s.db.WithContext(ctx).Table("publications p").Select("p.*, "+ownerColumns).
		Joins("JOIN accounts a ON a.cuid = p.account_cuid").Where("p.cuid = ?", cuid).Take(&row).Error
	if err != nil {
		return note.View{}, db.Classify(notFound(err))
	}
	p, err := fromRow(row.Pub)
	if err != nil {
		return note.View{}, err
	}
	return note.View{Publication: p, Owner: row.Owner.settings()}, nil
}

// SaveRender implements note.Storer.
func (s *Store) SaveRender(ctx context.Context, p note.Publication, prev string) error {
	row, err := toRow(p)
	if err != nil {
		return err
	}
	err = s.db.WithContext(ctx).Model(&publicationRow{}).
		Where("cuid = ? AND etag = ? AND render_id = ? AND render_version <= ?", p.CUID, p.ETag, prev, p.RenderVersion).
		Updates(map[string]any{"html": row.HTML, "render_version": row.RenderVersion, "render_id": row.RenderID, "render_links": row.RenderLinks,
			"render_tries": row.RenderTries, "render_misses": row.RenderMisses, "render_retry_ms": row.RenderRetryMS}).Error
	return db.Classify(err)
}

// ClaimRenders implements note.Storer. One statement claims: on Postgres, a second
// process's UPDATE of a row claimed meanwhile waits for the first and re-checks the
// retry time on the row it then sees, so it skips the row; SQLite has one writer.
func (s *Store) ClaimRenders(ctx context.Context, version int, now, until time.Time, limit int) ([]string, error) {
	var cuids []string
	err := s.db.WithContext(ctx).Raw("UPDATE publications SET render_retry_ms = ? "+
		"WHERE render_version < ? AND render_retry_ms <= ? AND NOT unpublished AND cuid IN "+
		"(SELECT cuid FROM publications WHERE render_version < ? AND render_retry_ms <= ? AND NOT unpublished LIMIT ?) RETURNING cuid",
		until.UnixMilli(), version, now.UnixMilli(), version, now.UnixMilli(), limit).Scan(&cuids).Error
	return cuids, db.Classify(err)
}

// ResolveTitles implements note.Storer.
func (s *Store) ResolveTitles(ctx context.Context, accountCUID string, titles []string, now time.Time) (map[string]note.LinkTarget, error) {
	return resolveTitles(s.db.WithContext(ctx), accountCUID, titles, now)
}

// resolveTitles is ResolveTitles on tx (the store's handle, or a transaction's).
func resolveTitles(tx *gorm.DB, accountCUID string, titles []string, now time.Time) (map[string]note.LinkTarget, error) {
	var rows []struct {
		CUID      string `gorm:"column:cuid"`
		Title     string
		ExpiresAt *time.Time
	}
	err := tx.Model(&publicationRow{}).Select("cuid, title, expires_at").
		Where("account_cuid = ? AND NOT unpublished AND title IN ?", accountCUID, titles).
		Order("updated_at DESC, cuid DESC").Scan(&rows).Error
	if err != nil {
		return nil, db.Classify(err)
	}
	found := make(map[string]note.LinkTarget, len(rows))
	for _, r := range rows {
		if _, ok := found[r.Title]; !ok && (r.ExpiresAt == nil || now.Before(*r.ExpiresAt)) {
			found[r.Title] = note.LinkTarget{CUID: r.CUID, ExpiresAt: utc(r.ExpiresAt)}
		}
	}
	return found, nil
}

// owned selects the owner's publication that is not unpublished.
func owned(tx *gorm.DB, cuid, accountCUID string) *gorm.DB {
	return tx.Where("cuid = ? AND account_cuid = ? AND NOT unpublished", cuid, accountCUID)
}

// Update implements note.Storer.
func (s *Store) Update(ctx context.Context, cuid, accountCUID string, now time.Time, images []note.StoredImage, reservation string,
	apply func(*note.Publication, []string, note.ResolveTitles) error) (note.Publication, error) {
	var out note.Publication
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var row publicationRow
		// FOR UPDATE serialises concurrent updates of one publication on Postgres, so
		// version numbers are unique and increasing; SQLite has a single writer anyway.
		if err := owned(tx, cuid, accountCUID).Clauses(clause.Locking{Strength: "UPDATE"}).Take(&row).Error; err != nil {
			return notFound(err)
		}
		snapshot := versionRow{PublicationCUID: cuid, Version: row.NextVersion, Text: row.Text, CreatedAt: now}
		if err := tx.Create(&snapshot).Error; err != nil {
			return err
		}
		if err := tx.Where("publication_cuid = ? AND version <= ?", cuid, row.NextVersion-note.MaxVersions).Delete(&versionRow{}).Error; err != nil {
			return err
		}
		var names []string
		if err := tx.Model(&imageRow{}).Where("publication_cuid = ? AND NOT released", cuid).Order("filename").Pluck("filename", &names).Error; err != nil {
			return err
		}
		for _, img := range images {
			if !slices.Contains(names, img.Filename) {
				names = append(names, img.Filename)
			}
		}
		p, err := fromRow(row)
		if err != nil {
			return err
		}
		resolve := func(ctx context.Context, accountCUID string, titles []string, now time.Time) (map[string]note.LinkTarget, error) {
			return resolveTitles(tx.WithContext(ctx), accountCUID, titles, now)
		}
		if err := apply(&p, names, resolve); err != nil {
			return err
		}
		next, err := toRow(p)
		if err != nil {
			return err
		}
		next.NextVersion = row.NextVersion + 1
		if err := tx.Select("*").Updates(&next).Error; err != nil {
			return err
		}
		if len(images) > 0 {
			if err := settle(tx, reservation); err != nil {
				return err
			}
			if err := replaceImages(tx, cuid, accountCUID, images); err != nil {
				return err
			}
		}
		out = p
		return nil
	})
	return out, db.Classify(err)
}

// Versions implements note.Storer.
func (s *Store) Versions(ctx context.Context, cuid, accountCUID string) ([]note.VersionMeta, error) {
	if err := s.exists(ctx, cuid, accountCUID); err != nil {
		return nil, err
	}
	var rows []struct {
		Version      int64
		CreatedAt    time.Time
		Title        *string
		ContentBytes int
	}
	err := s.db.WithContext(ctx).Model(&versionRow{}).
		Select("version, created_at, title, "+lengthBytes(s.db)+" AS content_bytes").
		Where("publication_cuid = ?", cuid).Order("version DESC").Limit(note.MaxVersions).Scan(&rows).Error
	if err != nil {
		return nil, db.Classify(err)
	}
	out := make([]note.VersionMeta, len(rows))
	for i, r := range rows {
		out[i] = note.VersionMeta{Number: r.Version, CreatedAt: r.CreatedAt, Title: r.Title, ContentBytes: r.ContentBytes}
	}
	return out, nil
}

// lengthBytes is the dialect's byte length of the content column.
func lengthBytes(gdb *gorm.DB) string {
	if db.Dialect(gdb) == db.Postgres {
		return "octet_length(content)"
	}
	return "length(CAST(content AS BLOB))"
}

// Version implements note.Storer.
func (s *Store) Version(ctx context.Context, cuid, accountCUID string, number int64) (note.Version, error) {
	if err := s.exists(ctx, cuid, accountCUID); err != nil {
		return note.Version{}, err
	}
	var row versionRow
	if err := s.db.WithContext(ctx).Where("publication_cuid = ? AND version = ?", cuid, number).Take(&row).Error; err != nil {
		return note.Version{}, db.Classify(notFound(err))
	}
	text, err := fromText(row.Text)
	if err != nil {
		return note.Version{}, err
	}
	return note.Version{Number: row.Version, CreatedAt: row.CreatedAt, Text: text}, nil
}

func (s *Store) exists(ctx context.Context, cuid, accountCUID string) error {
	var n int64
	if err := owned(s.db.WithContext(ctx).Model(&publicationRow{}), cuid, accountCUID).Count(&n).Error; err != nil {
		return db.Classify(err)
	}
	if n == 0 {
		return note.ErrNotFound
	}
	return nil
}

// Unpublish implements note.Storer.
func (s *Store) Unpublish(ctx context.Context, cuid, accountCUID string, now time.Time) error {
	return db.Classify(s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := owned(tx.Model(&publicationRow{}), cuid, accountCUID).Updates(map[string]any{"unpublished": true, "updated_at": now})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return note.ErrNotFound
		}
		var released struct{ Bytes, Images int64 }
		if err := tx.Model(&imageRow{}).Where("publication_cuid = ? AND NOT released", cuid).
			Select("COALESCE(SUM(size), 0) AS bytes, COUNT(*) AS images").Scan(&released).Error; err != nil {
			return err
		}
		if err := tx.Model(&imageRow{}).Where("publication_cuid = ? AND NOT released", cuid).Update("released", true).Error; err != nil {
			return err
		}
		return tx.Exec("UPDATE accounts SET image_bytes_used = image_bytes_used - ?, image_count = image_count - ? WHERE cuid = ?",
			released.Bytes, released.Images, accountCUID).Error
	}))
}

// listColumns are the columns of the owner's list: not the content or its render.
const listColumns = "cuid, account_cuid, title, summary, show_properties, expires_at, unpublished, created_ms, created_at, updated_at, etag"

// List implements note.Storer.
func (s *Store) List(ctx context.Context, accountCUID string, after *note.Cursor, limit int) ([]note.Publication, error) {
	q := s.db.WithContext(ctx).Select(listColumns).Where("account_cuid = ? AND NOT unpublished", accountCUID)
	if after != nil {
		// A row comparison, so that the database seeks in the list index to the cursor
		// instead of filtering every row before it (47× slower at a million rows).
		q = q.Where("(created_ms, cuid) < (?, ?)", after.CreatedMS, after.CUID)
	}
	var rows []publicationRow
	if err := q.Order("created_ms DESC, cuid DESC").Limit(limit).Find(&rows).Error; err != nil {
		return nil, db.Classify(err)
	}
	out := make([]note.Publication, 0, len(rows))
	for _, r := range rows {
		p, err := fromRow(r)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// FindImageView implements note.Storer.
func (s *Store) FindImageView(ctx context.Context, userCUID, noteCUID, filename string) (note.ImageView, error) {
	var row struct {
		Image          imageRow `gorm:"embedded"`
		Owner          ownerRow `gorm:"embedded"`
		ExpiresAt      *time.Time
		Unpublished    bool
		UpdatedAt      time.Time
		PublicationTag string
	}
	err := s.db.WithContext(ctx).Table("images i").
		Select("i.*, p.expires_at, p.unpublished, p.updated_at, p.etag AS publication_tag, "+ownerColumns).
		Joins("JOIN publications p ON p.cuid = i.publication_cuid").
		Joins("JOIN accounts a ON a.cuid = p.account_cuid").
		Where("i.account_cuid = ? AND i.publication_cuid = ? AND i.filename = ? AND NOT i.released", userCUID, noteCUID, filename).
		Take(&row).Error
	if err != nil {
		return note.ImageView{}, db.Classify(notFound(err))
	}
	i := row.Image
	img := note.StoredImage{AccountCUID: i.AccountCUID, PublicationCUID: i.PublicationCUID, Filename: i.Filename,
		MediaType: i.MediaType, Size: i.Size, SHA256: i.SHA256, BlobKey: i.BlobKey, CreatedAt: i.CreatedAt}
	p := note.Publication{CUID: i.PublicationCUID, AccountCUID: i.AccountCUID, Text: note.Text{ExpiresAt: utc(row.ExpiresAt)},
		Unpublished: row.Unpublished, UpdatedAt: row.UpdatedAt.UTC(), ETag: row.PublicationTag}
	return note.ImageView{Image: img, Note: note.View{Publication: p, Owner: row.Owner.settings()}}, nil
}

// LegacyImage implements note.Storer.
func (s *Store) LegacyImage(ctx context.Context, key string) ([]byte, error) {
	var data []byte
	err := s.db.WithContext(ctx).Raw("SELECT data FROM blobs WHERE key = ?", key).Row().Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, note.ErrNotFound
	}
	return data, db.Classify(err)
}

// CursorKey implements note.Storer. Every replica reads the same key; the first to need
// it creates it, and a concurrent creator's insert is ignored.
func (s *Store) CursorKey(ctx context.Context) ([]byte, error) {
	fresh := make([]byte, 32)
	_, _ = rand.Read(fresh)
	tx := s.db.WithContext(ctx)
	if err := tx.Clauses(clause.OnConflict{DoNothing: true}).
		Table("service_keys").Create(map[string]any{"name": "cursor", "secret": fresh}).Error; err != nil {
		return nil, db.Classify(err)
	}
	var key []byte
	if err := tx.Raw("SELECT secret FROM service_keys WHERE name = ?", "cursor").Row().Scan(&key); err != nil {
		return nil, db.Classify(err)
	}
	return key, nil
}

// toText encodes a note's text for its columns.
func toText(t note.Text) (textColumns, error) {
	var props *string
	if t.Properties != nil {
		b, err := json.Marshal(t.Properties)
		if err != nil {
			return textColumns{}, fmt.Errorf("%w: %v", note.ErrInvalidProperties, err)
		}
		s := string(b)
		props = &s
	}
	return textColumns{Title: t.Title, Summary: t.Summary, Content: t.Content, Properties: props,
		ShowProperties: t.ShowProperties, ExpiresAt: t.ExpiresAt}, nil
}

// fromText decodes a note's text from its columns.
func fromText(c textColumns) (note.Text, error) {
	props, err := decodeProperties(c.Properties)
	if err != nil {
		return note.Text{}, err
	}
	return note.Text{Title: c.Title, Summary: c.Summary, Content: c.Content, Properties: props,
		ShowProperties: c.ShowProperties, ExpiresAt: utc(c.ExpiresAt)}, nil
}

func toRow(p note.Publication) (publicationRow, error) {
	text, err := toText(p.Text)
	if err != nil {
		return publicationRow{}, err
	}
	links := ""
	if len(p.Links.List) > 0 {
		b, err := json.Marshal(p.Links)
		if err != nil {
			return publicationRow{}, err
		}
		links = string(b)
	}
	retry := int64(0)
	if !p.RenderRetry.IsZero() {
		retry = p.RenderRetry.UnixMilli()
	}
	return publicationRow{CUID: p.CUID, AccountCUID: p.AccountCUID, Text: text, Unpublished: p.Unpublished,
		CreatedMS: p.CreatedAt.UnixMilli(), CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt,
		HTML: p.HTML, RenderVersion: p.RenderVersion, RenderID: p.RenderID, RenderLinks: links,
		RenderTries: p.RenderTries, RenderMisses: p.RenderMisses, RenderRetryMS: retry, ETag: p.ETag}, nil
}

func fromRow(r publicationRow) (note.Publication, error) {
	text, err := fromText(r.Text)
	if err != nil {
		return note.Publication{}, err
	}
	p := note.Publication{CUID: r.CUID, AccountCUID: r.AccountCUID, Text: text, Unpublished: r.Unpublished,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), HTML: r.HTML, RenderVersion: r.RenderVersion, RenderID: r.RenderID,
		RenderTries: r.RenderTries, RenderMisses: r.RenderMisses, ETag: r.ETag}
	if r.RenderRetryMS != 0 {
		p.RenderRetry = time.UnixMilli(r.RenderRetryMS).UTC()
	}
	if r.RenderLinks != "" {
		if err := json.Unmarshal([]byte(r.RenderLinks), &p.Links); err != nil {
			return note.Publication{}, fmt.Errorf("stored links: %w", err)
		}
	}
	return p, nil
}

func decodeProperties(s *string) (map[string]any, error) {
	if s == nil {
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(*s), &m); err != nil {
		return nil, fmt.Errorf("stored properties: %w", err)
	}
	return m, nil
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func notFound(err error) error {
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return note.ErrNotFound
	}
	return err
}
