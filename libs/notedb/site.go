package notedb

import (
	"context"
	"time"

	"github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/site"
)

var _ site.MemberStore = (*Reads)(nil)

// SiteMembers implements site.MemberStore: the account's publications with a path that
// are not unpublished, with what site.Settings.Contains reads of them (site_excluded,
// written from the properties with the row).
func (s *Reads) SiteMembers(ctx context.Context, accountCUID string) ([]site.Member, error) {
	var rows []struct {
		CUID         string `gorm:"column:cuid"`
		Title        *string
		Path         *string
		ExpiresAt    *time.Time
		SiteExcluded bool
	}
	if err := s.db.WithContext(ctx).Model(&publicationRow{}).Select("cuid, title, path, expires_at, site_excluded").
		Where("account_cuid = ? AND path IS NOT NULL AND NOT unpublished", accountCUID).Scan(&rows).Error; err != nil {
		return nil, db.Classify(err)
	}
	out := make([]site.Member, len(rows))
	for i, r := range rows {
		out[i] = site.Member{CUID: r.CUID, Title: r.Title, Path: r.Path, ExpiresAt: utc(r.ExpiresAt), Excluded: r.SiteExcluded}
	}
	return out, nil
}
