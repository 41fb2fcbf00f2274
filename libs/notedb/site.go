package notedb

import (
	"context"
	"time"

	"github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/site"
)

var _ site.MemberStore = (*Reads)(nil)

// SiteMembers implements site.MemberStore: the account's publications with a path that
// are not unpublished, with what site.Settings.Contains reads of them.
func (s *Reads) SiteMembers(ctx context.Context, accountCUID string) ([]site.Member, error) {
	var rows []struct {
		CUID       string `gorm:"column:cuid"`
		Title      *string
		Path       *string
		ExpiresAt  *time.Time
		Properties *string
	}
	if err := s.db.WithContext(ctx).Model(&publicationRow{}).Select("cuid, title, path, expires_at, properties").
		Where("account_cuid = ? AND path IS NOT NULL AND NOT unpublished", accountCUID).Scan(&rows).Error; err != nil {
		return nil, db.Classify(err)
	}
	out := make([]site.Member, len(rows))
	for i, r := range rows {
		props, err := decodeProperties(r.Properties)
		if err != nil {
			return nil, err
		}
		out[i] = site.Member{CUID: r.CUID, Title: r.Title, Path: r.Path, ExpiresAt: utc(r.ExpiresAt), Properties: props}
	}
	return out, nil
}
