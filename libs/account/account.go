// Package account is the domain of sharing accounts and their credentials: the licenses
// an operator issues, the device activations of each license, and the two-hour session
// tokens exchanged for them. Every secret is stored as a hash and compared in constant
// time; every credential failure is the same ErrUnauthorized.
package account

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sharenote/sharenote/libs/cuid"
	"github.com/sharenote/sharenote/libs/secret"
)

// TokenLifetime is how long a session token is valid (docs/api.md "Limits").
const TokenLifetime = 2 * time.Hour

// Domain errors.
var (
	// ErrNotFound means the license (or account) does not exist.
	ErrNotFound = errors.New("account: not found")
	// ErrUnauthorized is every failed credential check, whichever part was wrong.
	ErrUnauthorized = errors.New("account: invalid credentials")
	// ErrInvalid is an operator input that cannot be stored.
	ErrInvalid = errors.New("account: invalid input")
)

// Account is a sharing account.
type Account struct {
	CUID      string
	Name      string
	Email     string
	CreatedAt time.Time
}

// Activation is a license's activation as the store returns it for a credential check.
type Activation struct {
	LicenseID    int64
	KeyHash      string
	InstanceHash string
	Account      Account
}

// Session is a stored session token.
type Session struct {
	TokenHash   string
	LicenseID   int64
	AccountCUID string
	CreatedAt   time.Time
	ExpiresAt   time.Time
}

// Storer is what the domain needs from storage; accountdb implements it.
type Storer interface {
	// CreateLicense stores a new account with its license and first activation.
	CreateLicense(ctx context.Context, a Account, keyHash, instanceHash string) error
	// AddActivation adds an activation to the license; ErrNotFound when there is none.
	AddActivation(ctx context.Context, keyHash, instanceHash string, now time.Time) (Account, error)
	// DeactivateLicense marks the license inactive and returns its account's cuid;
	// ErrNotFound when there is none.
	DeactivateLicense(ctx context.Context, keyHash string) (accountCUID string, err error)
	// FindActivation returns the activation of an active license; ErrNotFound otherwise.
	FindActivation(ctx context.Context, keyHash, instanceHash string) (Activation, error)
	// CreateSession stores a session.
	CreateSession(ctx context.Context, s Session) error
	// FindSession returns the session of an active license; ErrNotFound otherwise.
	FindSession(ctx context.Context, tokenHash string) (Session, error)
}

// Credentials are what the operator hands to the owner of a license (docs/api.md
// "Authentication").
type Credentials struct {
	LicenseKey string `json:"license_key"`
	InstanceID string `json:"instance_id"`
	UserCUID   string `json:"user_cuid"`
}

// Token is an issued session token with its account.
type Token struct {
	Token     string
	ExpiresAt time.Time
	Account   Account
}

// Principal is the authenticated caller of a bearer route.
type Principal struct {
	AccountCUID string
	// ExpiresAt is when the session token that authenticated it expires.
	ExpiresAt time.Time
}

// Notifier tells every process of changes that make cached reads or sessions stale.
type Notifier interface {
	// SettingsChanged: the account's public reads show other settings now.
	SettingsChanged(ctx context.Context, accountCUID string)
	// SessionsRevoked: the account's session tokens are no longer valid.
	SessionsRevoked(ctx context.Context, accountCUID string)
}

// Core implements the account use cases on a Storer.
type Core struct {
	store    Storer
	now      func() time.Time
	notifier Notifier
}

// NewCore returns a Core reading time from now (injectable so that tests can expire tokens
// without sleeping) and telling notifier (nil: no one) when sessions are revoked.
func NewCore(store Storer, now func() time.Time, notifier Notifier) *Core {
	return &Core{store: store, now: now, notifier: notifier}
}

func (c *Core) clock() time.Time { return c.now().UTC().Truncate(time.Millisecond) }

// CreateLicense creates an account, its license and one activation. An empty instanceID
// gets a random one.
func (c *Core) CreateLicense(ctx context.Context, name, email, instanceID string) (Credentials, error) {
	name = strings.TrimSpace(name)
	if n := utf8.RuneCountInString(name); n < 1 || n > 100 {
		return Credentials{}, fmt.Errorf("%w: name must be 1 to 100 characters", ErrInvalid)
	}
	if addr, err := mail.ParseAddress(email); err != nil || addr.Address != email {
		return Credentials{}, fmt.Errorf("%w: %q is not an email address", ErrInvalid, email)
	}
	instanceID, err := instanceOrNew(instanceID)
	if err != nil {
		return Credentials{}, err
	}
	a := Account{CUID: cuid.New(), Name: name, Email: email, CreatedAt: c.clock()}
	key := secret.New("snk_", 32)
	if err := c.store.CreateLicense(ctx, a, secret.Hash(key), secret.Hash(instanceID)); err != nil {
		return Credentials{}, fmt.Errorf("create license: %w", err)
	}
	return Credentials{LicenseKey: key, InstanceID: instanceID, UserCUID: a.CUID}, nil
}

// AddInstance adds an activation to an existing license. An empty instanceID gets a
// random one.
func (c *Core) AddInstance(ctx context.Context, licenseKey, instanceID string) (Credentials, error) {
	instanceID, err := instanceOrNew(instanceID)
	if err != nil {
		return Credentials{}, err
	}
	a, err := c.store.AddActivation(ctx, secret.Hash(licenseKey), secret.Hash(instanceID), c.clock())
	if err != nil {
		return Credentials{}, fmt.Errorf("add instance: %w", err)
	}
	return Credentials{LicenseKey: licenseKey, InstanceID: instanceID, UserCUID: a.CUID}, nil
}

// Deactivate makes the license and every token issued for it invalid, in every process
// within a second (its publications stay published).
func (c *Core) Deactivate(ctx context.Context, licenseKey string) error {
	accountCUID, err := c.store.DeactivateLicense(ctx, secret.Hash(licenseKey))
	if err != nil {
		return fmt.Errorf("deactivate: %w", err)
	}
	if c.notifier != nil {
		c.notifier.SessionsRevoked(ctx, accountCUID)
	}
	return nil
}

// Authenticate exchanges license credentials for a session token. Any mismatch (unknown
// key, inactive license, an instance that is not an activation of this license) is
// ErrUnauthorized.
func (c *Core) Authenticate(ctx context.Context, licenseKey, instanceID string) (Token, error) {
	if licenseKey == "" || instanceID == "" {
		return Token{}, ErrUnauthorized
	}
	keyHash, instanceHash := secret.Hash(licenseKey), secret.Hash(instanceID)
	act, err := c.store.FindActivation(ctx, keyHash, instanceHash)
	if errors.Is(err, ErrNotFound) {
		return Token{}, ErrUnauthorized
	}
	if err != nil {
		return Token{}, fmt.Errorf("authenticate: %w", err)
	}
	// The store found the row by its hashes; comparing them again in constant time keeps
	// the decision itself free of timing differences whatever the store does.
	if !secret.Equal(act.KeyHash, keyHash) || !secret.Equal(act.InstanceHash, instanceHash) {
		return Token{}, ErrUnauthorized
	}
	now := c.clock()
	token := secret.New("snt_", 32)
	s := Session{TokenHash: secret.Hash(token), LicenseID: act.LicenseID, AccountCUID: act.Account.CUID,
		CreatedAt: now, ExpiresAt: now.Add(TokenLifetime)}
	if err := c.store.CreateSession(ctx, s); err != nil {
		return Token{}, fmt.Errorf("authenticate: %w", err)
	}
	return Token{Token: token, ExpiresAt: s.ExpiresAt, Account: act.Account}, nil
}

// Verify resolves a bearer token to its principal. Unknown tokens, tokens of deactivated
// licenses and expired tokens are ErrUnauthorized.
func (c *Core) Verify(ctx context.Context, token string) (Principal, error) {
	if token == "" {
		return Principal{}, ErrUnauthorized
	}
	hash := secret.Hash(token)
	s, err := c.store.FindSession(ctx, hash)
	if errors.Is(err, ErrNotFound) {
		return Principal{}, ErrUnauthorized
	}
	if err != nil {
		return Principal{}, fmt.Errorf("verify token: %w", err)
	}
	if !secret.Equal(s.TokenHash, hash) || !c.now().Before(s.ExpiresAt) {
		return Principal{}, ErrUnauthorized
	}
	return Principal{AccountCUID: s.AccountCUID, ExpiresAt: s.ExpiresAt}, nil
}

func instanceOrNew(id string) (string, error) {
	if id == "" {
		return secret.New("sni_", 16), nil
	}
	if len(id) > 200 || strings.ContainsFunc(id, func(r rune) bool { return r < 0x21 || r == 0x7f }) {
		return "", fmt.Errorf("%w: instance id must be 1 to 200 printable characters without spaces", ErrInvalid)
	}
	return id, nil
}
