package edge

import (
	"context"
	"fmt"

	"gorm.io/gorm"
)

// accountNote is a note of an account whose reads a purge without a note drops.
type accountNote struct {
	AccountCUID string `gorm:"column:account_cuid"`
	CUID        string `gorm:"column:cuid"`
}

// accountNotes returns the notes of accounts that are not unpublished: those whose
// reads may be cached.
func accountNotes(ctx context.Context, gdb *gorm.DB, accounts []string) ([]accountNote, error) {
	var out []accountNote
	for len(accounts) > 0 {
		n := min(len(accounts), chunk)
		var part []accountNote
		if err := gdb.WithContext(ctx).Table("publications").Select("account_cuid, cuid").
			Where("account_cuid IN ? AND NOT unpublished", accounts[:n]).Scan(&part).Error; err != nil {
			return nil, fmt.Errorf("read the notes of accounts to purge: %w", err)
		}
		out = append(out, part...)
		accounts = accounts[n:]
	}
	return out, nil
}

// chunk is how many accounts one statement names.
const chunk = 500
