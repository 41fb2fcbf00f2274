package authn

import (
	"context"
	"sync"
	"time"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/changefeed"
	"github.com/sharenote/sharenote/libs/secret"
)

// maxSessions bounds the sessions a Cache remembers; when it is full it starts afresh,
// which costs one query per active token.
const maxSessions = 100_000

// Cache is a Verifier that remembers the sessions next verified, by the hash of their
// token, so that an authenticated request costs no query. A remembered session is used
// until it expires while it is fresh (changefeed.Feed.Fresh): a license deactivation
// drops its account's sessions through the change feed, and a process that cannot hear
// the feed asks next again after a second. Failed checks are not remembered.
type Cache struct {
	next  Verifier
	fresh func(loadedAt time.Time) bool
	now   func() time.Time

	mu        sync.Mutex
	sessions  map[string]session
	byAccount map[string]map[string]struct{}
	// revoked holds when each account's sessions were last revoked, so that a check that
	// began before a revocation is not remembered.
	revoked map[string]time.Time
}

type session struct {
	p        account.Principal
	loadedAt time.Time
}

// NewCache returns a Cache in front of next. fresh judges an entry by when it was loaded
// (wall clock); now is the clock that expires sessions.
func NewCache(next Verifier, fresh func(loadedAt time.Time) bool, now func() time.Time) *Cache {
	return &Cache{next: next, fresh: fresh, now: now, sessions: map[string]session{},
		byAccount: map[string]map[string]struct{}{}, revoked: map[string]time.Time{}}
}

// Verify implements Verifier.
func (c *Cache) Verify(ctx context.Context, token string) (account.Principal, error) {
	hash := secret.Hash(token)
	c.mu.Lock()
	s, ok := c.sessions[hash]
	c.mu.Unlock()
	if ok && c.now().Before(s.p.ExpiresAt) && c.fresh(s.loadedAt) {
		return s.p, nil
	}
	start := time.Now()
	p, err := c.next.Verify(ctx, token)
	if err != nil {
		return account.Principal{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.revoked[p.AccountCUID]; ok && !r.Before(start) {
		return p, nil
	}
	if len(c.sessions) >= maxSessions {
		clear(c.sessions)
		clear(c.byAccount)
	}
	c.sessions[hash] = session{p: p, loadedAt: start}
	keys, ok := c.byAccount[p.AccountCUID]
	if !ok {
		keys = map[string]struct{}{}
		c.byAccount[p.AccountCUID] = keys
	}
	keys[hash] = struct{}{}
	return p, nil
}

// Drop forgets the sessions of an account whose sessions were revoked (a Sessions event).
func (c *Cache) Drop(e changefeed.Event) {
	if e.Kind != changefeed.Sessions {
		return
	}
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for hash := range c.byAccount[e.ID] {
		delete(c.sessions, hash)
	}
	delete(c.byAccount, e.ID)
	for acct, t := range c.revoked {
		if now.Sub(t) > time.Minute {
			delete(c.revoked, acct)
		}
	}
	c.revoked[e.ID] = now
}
