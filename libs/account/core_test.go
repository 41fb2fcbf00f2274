package account_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/testkit"
)

// The fakes of this file stand in for the account cores' ports: plain in-memory types
// that keep the contracts of Storer and SettingsStorer, so that the use cases' logic is
// tested without a database.

var (
	_ account.Storer         = (*fakeStore)(nil)
	_ account.SettingsStorer = (*fakeStore)(nil)
	_ account.Notifier       = (*fakeNotifier)(nil)
)

// fakeStore keeps accounts, licenses and sessions in maps; every method is one
// transaction under the mutex.
type fakeStore struct {
	mu       sync.Mutex
	licenses map[string]*license // by key hash
	sessions map[string]account.Session
	accounts map[string]*profile
	nextID   int64
}

type license struct {
	id        int64
	account   account.Account
	active    bool
	instances []string // hashes
}

type profile struct {
	name string
	p    account.Profile
}

func newFakeStore() *fakeStore {
	return &fakeStore{licenses: map[string]*license{}, sessions: map[string]account.Session{}, accounts: map[string]*profile{}}
}

func (s *fakeStore) CreateLicense(_ context.Context, a account.Account, keyHash, instanceHash string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.licenses[keyHash]; ok {
		return fmt.Errorf("create license: duplicate key")
	}
	s.nextID++
	s.licenses[keyHash] = &license{id: s.nextID, account: a, active: true, instances: []string{instanceHash}}
	s.accounts[a.CUID] = &profile{name: a.Name, p: account.Profile{Settings: account.DefaultSettings(a.Name)}}
	return nil
}

func (s *fakeStore) AddActivation(_ context.Context, keyHash, instanceHash string, _ time.Time) (account.Account, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.licenses[keyHash]
	if !ok {
		return account.Account{}, account.ErrNotFound
	}
	if !slices.Contains(l.instances, instanceHash) {
		l.instances = append(l.instances, instanceHash)
	}
	return l.account, nil
}

func (s *fakeStore) DeactivateLicense(_ context.Context, keyHash string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.licenses[keyHash]
	if !ok {
		return "", account.ErrNotFound
	}
	l.active = false
	return l.account.CUID, nil
}

func (s *fakeStore) FindActivation(_ context.Context, keyHash, instanceHash string) (account.Activation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.licenses[keyHash]
	if !ok || !l.active || !slices.Contains(l.instances, instanceHash) {
		return account.Activation{}, account.ErrNotFound
	}
	return account.Activation{LicenseID: l.id, KeyHash: keyHash, InstanceHash: instanceHash, Account: l.account}, nil
}

func (s *fakeStore) CreateSession(_ context.Context, session account.Session) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sessions[session.TokenHash] = session
	return nil
}

func (s *fakeStore) FindSession(_ context.Context, tokenHash string) (account.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	session, ok := s.sessions[tokenHash]
	if !ok {
		return account.Session{}, account.ErrNotFound
	}
	for _, l := range s.licenses {
		if l.id == session.LicenseID && l.active {
			return session, nil
		}
	}
	return account.Session{}, account.ErrNotFound
}

func (s *fakeStore) Profile(_ context.Context, accountCUID string) (string, account.Profile, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.accounts[accountCUID]
	if !ok {
		return "", account.Profile{}, account.ErrNotFound
	}
	return a.name, a.p, nil
}

func (s *fakeStore) ChangeSettings(_ context.Context, accountCUID string, change func(name string, p account.Profile) (account.Settings, error)) (account.Profile, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.accounts[accountCUID]
	if !ok {
		return account.Profile{}, account.ErrNotFound
	}
	settings, err := change(a.name, a.p)
	if err != nil {
		return account.Profile{}, err
	}
	a.p.Settings = settings
	return a.p, nil
}

// fakeNotifier records the notifications as "settings <cuid>" and "sessions <cuid>".
type fakeNotifier struct {
	mu    sync.Mutex
	calls []string
}

func (n *fakeNotifier) SettingsChanged(_ context.Context, accountCUID string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.calls = append(n.calls, "settings "+accountCUID)
}

func (n *fakeNotifier) SessionsRevoked(_ context.Context, accountCUID string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.calls = append(n.calls, "sessions "+accountCUID)
}

func (n *fakeNotifier) recorded() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.calls)
}

var start = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

// newCore returns an account.Core on fakes, with them.
func newCore() (*account.Core, *fakeStore, *fakeNotifier, *testkit.Clock) {
	store, notifier, clock := newFakeStore(), &fakeNotifier{}, testkit.ClockAt(start)
	return account.NewCore(store, clock.Now, notifier), store, notifier, clock
}

func TestLicenseCredentials(t *testing.T) {
	ctx := context.Background()
	core, _, _, _ := newCore()
	creds, err := core.CreateLicense(ctx, "  Ada  ", "ada@example.com", "laptop")
	if err != nil {
		t.Fatal(err)
	}
	if creds.InstanceID != "laptop" || creds.LicenseKey == "" || creds.UserCUID == "" {
		t.Fatalf("credentials %+v", creds)
	}
	other, err := core.CreateLicense(ctx, "Bob", "bob@example.com", "")
	if err != nil || other.InstanceID == "" || other.LicenseKey == creds.LicenseKey {
		t.Fatalf("second license %+v, %v: want a random instance and another key", other, err)
	}

	cases := []struct {
		name          string
		key, instance string
		ok            bool
	}{
		{"the license's key and instance authenticate", creds.LicenseKey, "laptop", true},
		{"an unknown instance is unauthorized", creds.LicenseKey, "phone", false},
		{"another license's instance is unauthorized", creds.LicenseKey, other.InstanceID, false},
		{"an unknown key is unauthorized", "snk_wrong", "laptop", false},
		{"an empty key is unauthorized", "", "laptop", false},
		{"an empty instance is unauthorized", creds.LicenseKey, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tok, err := core.Authenticate(ctx, tc.key, tc.instance)
			if !tc.ok {
				if !errors.Is(err, account.ErrUnauthorized) {
					t.Fatalf("Authenticate = %v, want ErrUnauthorized", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tok.Account.CUID != creds.UserCUID || tok.Account.Name != "Ada" || !tok.ExpiresAt.Equal(start.Add(account.TokenLifetime)) {
				t.Fatalf("token %+v, want Ada's for two hours", tok)
			}
		})
	}

	t.Run("an added instance authenticates", func(t *testing.T) {
		added, err := core.AddInstance(ctx, creds.LicenseKey, "phone")
		if err != nil || added.UserCUID != creds.UserCUID {
			t.Fatalf("AddInstance = %+v, %v", added, err)
		}
		if _, err := core.Authenticate(ctx, creds.LicenseKey, "phone"); err != nil {
			t.Fatalf("Authenticate with the added instance: %v", err)
		}
	})
	t.Run("an instance of an unknown license is not found", func(t *testing.T) {
		if _, err := core.AddInstance(ctx, "snk_wrong", "phone"); !errors.Is(err, account.ErrNotFound) {
			t.Fatalf("AddInstance = %v, want ErrNotFound", err)
		}
	})
}

// wrongRowStore is a store whose FindActivation answers with another activation of the
// license than the one asked for, as a store whose query went wrong would.
type wrongRowStore struct{ *fakeStore }

func (s wrongRowStore) FindActivation(ctx context.Context, keyHash, _ string) (account.Activation, error) {
	l, ok := s.licenses[keyHash]
	if !ok {
		return account.Activation{}, account.ErrNotFound
	}
	return s.fakeStore.FindActivation(ctx, keyHash, l.instances[0])
}

func TestAuthenticateChecksTheHashesItself(t *testing.T) {
	ctx := context.Background()
	store := newFakeStore()
	core := account.NewCore(wrongRowStore{store}, (testkit.ClockAt(start)).Now, nil)
	creds, err := core.CreateLicense(ctx, "Ada", "ada@example.com", "laptop")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := core.Authenticate(ctx, creds.LicenseKey, "laptop"); err != nil {
		t.Fatalf("Authenticate with the right row: %v", err)
	}
	if _, err := core.Authenticate(ctx, creds.LicenseKey, "phone"); !errors.Is(err, account.ErrUnauthorized) {
		t.Fatalf("Authenticate given another instance's row = %v, want ErrUnauthorized", err)
	}
}

func TestCreateLicenseRefusesBadInput(t *testing.T) {
	long := string(make([]byte, 201))
	cases := []struct{ name, who, email, instance string }{
		{"a blank name", "   ", "ada@example.com", ""},
		{"a name over 100 characters", string(make([]rune, 101)), "ada@example.com", ""},
		{"an address that is not one", "Ada", "ada", ""},
		{"an address with a display name", "Ada", "Ada <ada@example.com>", ""},
		{"an instance id with a space", "Ada", "ada@example.com", "my laptop"},
		{"an instance id over 200 bytes", "Ada", "ada@example.com", long},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			core, store, _, _ := newCore()
			if _, err := core.CreateLicense(context.Background(), tc.who, tc.email, tc.instance); !errors.Is(err, account.ErrInvalid) {
				t.Fatalf("CreateLicense = %v, want ErrInvalid", err)
			}
			if len(store.licenses) != 0 {
				t.Fatal("a refused license was stored")
			}
		})
	}
}

func TestSessionTokens(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T) (*account.Core, *fakeNotifier, *testkit.Clock, account.Credentials, account.Token) {
		core, _, notifier, clock := newCore()
		creds, err := core.CreateLicense(ctx, "Ada", "ada@example.com", "laptop")
		if err != nil {
			t.Fatal(err)
		}
		tok, err := core.Authenticate(ctx, creds.LicenseKey, "laptop")
		if err != nil {
			t.Fatal(err)
		}
		return core, notifier, clock, creds, tok
	}
	t.Run("a token verifies to its account until it expires", func(t *testing.T) {
		core, _, clock, creds, tok := setup(t)
		clock.Advance(account.TokenLifetime - time.Millisecond)
		p, err := core.Verify(ctx, tok.Token)
		if err != nil || p.AccountCUID != creds.UserCUID || !p.ExpiresAt.Equal(tok.ExpiresAt) {
			t.Fatalf("Verify = %+v, %v", p, err)
		}
		clock.Advance(time.Millisecond)
		if _, err := core.Verify(ctx, tok.Token); !errors.Is(err, account.ErrUnauthorized) {
			t.Fatalf("Verify at expiry = %v, want ErrUnauthorized", err)
		}
	})
	t.Run("an unknown or empty token is unauthorized", func(t *testing.T) {
		core, _, _, _, tok := setup(t)
		for _, bad := range []string{"", "snt_unknown", tok.Token + "x"} {
			if _, err := core.Verify(ctx, bad); !errors.Is(err, account.ErrUnauthorized) {
				t.Errorf("Verify(%q) = %v, want ErrUnauthorized", bad, err)
			}
		}
	})
	t.Run("deactivating revokes the sessions and the license", func(t *testing.T) {
		core, notifier, _, creds, tok := setup(t)
		if err := core.Deactivate(ctx, creds.LicenseKey); err != nil {
			t.Fatal(err)
		}
		if got := notifier.recorded(); !slices.Equal(got, []string{"sessions " + creds.UserCUID}) {
			t.Fatalf("notified %q, want one SessionsRevoked", got)
		}
		if _, err := core.Verify(ctx, tok.Token); !errors.Is(err, account.ErrUnauthorized) {
			t.Fatalf("Verify after deactivation = %v, want ErrUnauthorized", err)
		}
		if _, err := core.Authenticate(ctx, creds.LicenseKey, "laptop"); !errors.Is(err, account.ErrUnauthorized) {
			t.Fatalf("Authenticate after deactivation = %v, want ErrUnauthorized", err)
		}
	})
	t.Run("deactivating an unknown license is not found and tells no one", func(t *testing.T) {
		core, notifier, _, _, _ := setup(t)
		if err := core.Deactivate(ctx, "snk_wrong"); !errors.Is(err, account.ErrNotFound) {
			t.Fatalf("Deactivate = %v, want ErrNotFound", err)
		}
		if got := notifier.recorded(); len(got) != 0 {
			t.Fatalf("notified %q", got)
		}
	})
}

func TestSettingsCoreChange(t *testing.T) {
	ctx := context.Background()
	const quota = 1 << 20
	setup := func(t *testing.T) (*account.SettingsCore, *fakeNotifier, string) {
		core, store, _, _ := newCore()
		creds, err := core.CreateLicense(ctx, "Ada", "ada@example.com", "laptop")
		if err != nil {
			t.Fatal(err)
		}
		notifier := &fakeNotifier{}
		return account.NewSettingsCore(store, quota, notifier), notifier, creds.UserCUID
	}
	t.Run("a change is stored and told to every process once", func(t *testing.T) {
		sc, notifier, who := setup(t)
		p, err := sc.Change(ctx, who, account.SettingsChange{Theme: new("dark"), AccentColor: new("#ABCDEF")})
		if err != nil {
			t.Fatal(err)
		}
		want := account.DefaultSettings("Ada")
		want.Theme, want.AccentColor = "dark", "#abcdef"
		if p.Settings != want || p.Storage.ImageLimitBytes != quota {
			t.Fatalf("Change = %+v, want %+v with the quota", p, want)
		}
		got, err := sc.Get(ctx, who)
		if err != nil || got.Settings != want || got.Storage.ImageLimitBytes != quota {
			t.Fatalf("Get = %+v, %v", got, err)
		}
		if calls := notifier.recorded(); !slices.Equal(calls, []string{"settings " + who}) {
			t.Fatalf("notified %q, want one SettingsChanged", calls)
		}
	})
	cases := []struct {
		name   string
		change account.SettingsChange
		field  string
	}{
		{"an unknown theme", account.SettingsChange{Theme: new("neon"), Font: new("serif")}, "theme"},
		{"an unknown font", account.SettingsChange{Font: new("comic")}, "font"},
		{"a colour that is not #rrggbb", account.SettingsChange{AccentColor: new("red")}, "accent_color"},
		{"a blank name", account.SettingsChange{Replace: true, Name: new(" ")}, "name"},
	}
	for _, tc := range cases {
		t.Run(tc.name+" leaves the settings unchanged and tells no one", func(t *testing.T) {
			sc, notifier, who := setup(t)
			before, err := sc.Get(ctx, who)
			if err != nil {
				t.Fatal(err)
			}
			_, err = sc.Change(ctx, who, tc.change)
			var fe *account.FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Fatalf("Change = %v, want a FieldError of %s", err, tc.field)
			}
			if after, _ := sc.Get(ctx, who); !reflect.DeepEqual(after, before) {
				t.Fatalf("settings changed to %+v", after)
			}
			if calls := notifier.recorded(); len(calls) != 0 {
				t.Fatalf("notified %q", calls)
			}
		})
	}
	t.Run("an unknown account is not found and tells no one", func(t *testing.T) {
		sc, notifier, _ := setup(t)
		if _, err := sc.Change(ctx, "nosuchaccount", account.SettingsChange{Theme: new("dark")}); !errors.Is(err, account.ErrNotFound) {
			t.Fatalf("Change = %v, want ErrNotFound", err)
		}
		if _, err := sc.Get(ctx, "nosuchaccount"); !errors.Is(err, account.ErrNotFound) {
			t.Fatalf("Get = %v, want ErrNotFound", err)
		}
		if calls := notifier.recorded(); len(calls) != 0 {
			t.Fatalf("notified %q", calls)
		}
	})
}
