package site

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sharenote/sharenote/libs/account"
)

// ErrHandleTaken is what SettingsStore.ChangeSite returns when another account holds or
// held the handle.
var ErrHandleTaken = errors.New("site handle taken")

// SettingsStore is what the site's settings need of storage; accountdb implements it.
type SettingsStore interface {
	// Site returns the account's site settings (the zero Settings when it never changed
	// them).
	Site(ctx context.Context, accountCUID string) (Settings, error)
	// ChangeSite applies change to the account's site settings in one transaction, which
	// also takes a new handle for the account for good (ErrHandleTaken when another account
	// holds or held it), and returns the settings before and after.
	ChangeSite(ctx context.Context, accountCUID string, change func(Settings) (Settings, error)) (before, after Settings, err error)
	// ReleaseHandle lets another account take handle: ErrHandleInUse while a site has it,
	// ErrNoHandle when no account holds it.
	ReleaseHandle(ctx context.Context, handle string) error
	// HandleHolder returns the account that holds or held handle, "" when none did.
	HandleHolder(ctx context.Context, handle string) (string, error)
}

// The errors of ReleaseHandle.
var (
	ErrHandleInUse = errors.New("the handle is a site's current handle; change that site's handle first")
	ErrNoHandle    = errors.New("no account holds the handle")
)

// MemberStore reads the notes whose membership a change of the settings may change;
// notedb implements it.
type MemberStore interface {
	// SiteMembers returns every publication of the account that is not unpublished and
	// has a path.
	SiteMembers(ctx context.Context, accountCUID string) ([]Member, error)
}

// Config is what Core needs besides its stores.
type Config struct {
	// Reserved are the handles no account may take.
	Reserved []string
	// PublicURL is the service's base URL, without a trailing slash.
	PublicURL string
	Now       func() time.Time
	// Notifier (nil: no one) is told of every change: every public read of the account
	// may show the site now (canonical links, site URLs).
	Notifier account.Notifier
}

// Core is the site settings' use cases.
type Core struct {
	settings SettingsStore
	members  MemberStore
	cfg      Config
}

// NewCore returns the use cases over the stores.
func NewCore(settings SettingsStore, members MemberStore, cfg Config) *Core {
	return &Core{settings: settings, members: members, cfg: cfg}
}

// View is the site as its owner reads it: the settings, the site's URL (nil without a
// handle) and, after a change, how many notes it put into the site that were not in it;
// a preview (Core.Preview) also names them (Listed is nil otherwise).
type View struct {
	Settings
	URL         *string
	NewlyListed int
	Listed      []Member
}

// Get returns the account's site.
func (c *Core) Get(ctx context.Context, accountCUID string) (View, error) {
	s, err := c.settings.Site(ctx, accountCUID)
	if err != nil {
		return View{}, fmt.Errorf("site: %w", err)
	}
	return c.view(s), nil
}

// Change applies ch to the account's site and returns it with the count of notes the
// change listed. The count is taken after the commit, over the notes as they are then.
func (c *Core) Change(ctx context.Context, accountCUID string, ch Change) (View, error) {
	before, after, err := c.settings.ChangeSite(ctx, accountCUID, func(s Settings) (Settings, error) {
		return ch.Apply(s, c.cfg.Reserved)
	})
	if errors.Is(err, ErrHandleTaken) {
		err = &account.FieldError{Field: "handle", Reason: "is taken"}
	}
	if err != nil {
		return View{}, fmt.Errorf("change site: %w", err)
	}
	if c.cfg.Notifier != nil {
		c.cfg.Notifier.SettingsChanged(ctx, accountCUID)
	}
	listed, err := c.listed(ctx, accountCUID, before, after)
	if err != nil {
		return View{}, err
	}
	v := c.view(after)
	v.NewlyListed = len(listed)
	return v, nil
}

// Preview is Change without the change: the site as ch would make it, with the notes it
// would put into the site (Listed), checked by the same rules; nothing is written.
func (c *Core) Preview(ctx context.Context, accountCUID string, ch Change) (View, error) {
	before, err := c.settings.Site(ctx, accountCUID)
	if err != nil {
		return View{}, fmt.Errorf("preview site: %w", err)
	}
	after, err := ch.Apply(before, c.cfg.Reserved)
	if err != nil {
		return View{}, fmt.Errorf("preview site: %w", err)
	}
	if after.Handle != nil {
		holder, err := c.settings.HandleHolder(ctx, *after.Handle)
		if err != nil {
			return View{}, fmt.Errorf("preview site: %w", err)
		}
		if holder != "" && holder != accountCUID {
			return View{}, fmt.Errorf("preview site: %w", &account.FieldError{Field: "handle", Reason: "is taken"})
		}
	}
	listed, err := c.listed(ctx, accountCUID, before, after)
	if err != nil {
		return View{}, err
	}
	v := c.view(after)
	v.NewlyListed, v.Listed = len(listed), listed
	if v.Listed == nil {
		v.Listed = []Member{} // A preview names the notes it lists, also when there are none.
	}
	return v, nil
}

// listed returns the account's notes that after puts into the site and before did not,
// by path (bytewise).
func (c *Core) listed(ctx context.Context, accountCUID string, before, after Settings) ([]Member, error) {
	if !after.Enabled {
		return nil, nil
	}
	members, err := c.members.SiteMembers(ctx, accountCUID)
	if err != nil {
		return nil, fmt.Errorf("read the notes listed: %w", err)
	}
	now := c.cfg.Now()
	var out []Member
	for _, m := range members {
		if after.Contains(m, now) && !before.Contains(m, now) {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b Member) int { return strings.Compare(*a.Path, *b.Path) })
	return out, nil
}

// ReleaseHandle lets another account take handle, which no site has now (the operator's
// `sharenote sites release-handle`): the URLs of its old holder's site no longer answer
// 301 at it.
func (c *Core) ReleaseHandle(ctx context.Context, handle string) error {
	if err := c.settings.ReleaseHandle(ctx, strings.ToLower(handle)); err != nil {
		return fmt.Errorf("release handle %s: %w", handle, err)
	}
	return nil
}

// view is s as its owner reads it.
func (c *Core) view(s Settings) View {
	v := View{Settings: s}
	if s.Handle != nil {
		v.URL = new(c.cfg.PublicURL + "/@" + *s.Handle + "/")
	}
	return v
}
