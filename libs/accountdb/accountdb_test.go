package accountdb_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/accountdb"
	"github.com/sharenote/sharenote/libs/cuid"
	"github.com/sharenote/sharenote/libs/secret"
	"github.com/sharenote/sharenote/libs/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// fixture is the account domain on a fresh database of one backend.
type fixture struct {
	gdb   *gorm.DB
	store *accountdb.Store
	core  *account.Core
	clock *testkit.Clock
}

func setup(t *testing.T, b testkit.Backend) fixture {
	t.Helper()
	gdb := testkit.OpenDB(t, b)
	store := accountdb.New(gdb, testkit.Changes())
	clock := testkit.NewClock()
	return fixture{gdb: gdb, store: store, core: account.NewCore(store, clock.Now, nil), clock: clock}
}

var ctx = context.Background()

func (f fixture) license(t *testing.T, name, instanceID string) account.Credentials {
	t.Helper()
	creds, err := f.core.CreateLicense(ctx, name, strings.ToLower(strings.Join(strings.Fields(name), "."))+"@example.com", instanceID)
	if err != nil {
		t.Fatalf("CreateLicense(%q): %v", name, err)
	}
	return creds
}

func (f fixture) login(t *testing.T, c account.Credentials) account.Token {
	t.Helper()
	tok, err := f.core.Authenticate(ctx, c.LicenseKey, c.InstanceID)
	if err != nil {
		t.Fatalf("Authenticate: %v", err)
	}
	return tok
}

// rows returns every row of table as text cells.
func (f fixture) rows(t *testing.T, table string) []map[string]string {
	t.Helper()
	var raw []map[string]any
	if err := f.gdb.Table(table).Find(&raw).Error; err != nil {
		t.Fatalf("read %s: %v", table, err)
	}
	out := make([]map[string]string, 0, len(raw))
	for _, r := range raw {
		row := map[string]string{}
		for k, v := range r {
			if b, ok := v.([]byte); ok {
				v = string(b) // Some drivers return text as bytes; compare it as text.
			}
			row[k] = fmt.Sprint(v)
		}
		out = append(out, row)
	}
	return out
}

func (f fixture) count(t *testing.T, table string) int64 {
	t.Helper()
	var n int64
	if err := f.gdb.Table(table).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCreateLicenseReturnsCredentials(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := setup(t, b)
		c := f.license(t, "Ada Lovelace", "")
		if !strings.HasPrefix(c.LicenseKey, "snk_") || len(c.LicenseKey) < len("snk_")+43 {
			t.Errorf("license key %q: want snk_ and 256 random bits", c.LicenseKey)
		}
		if !strings.HasPrefix(c.InstanceID, "sni_") || len(c.InstanceID) < len("sni_")+22 {
			t.Errorf("generated instance id %q: want sni_ and 128 random bits", c.InstanceID)
		}
		if !cuid.Valid(c.UserCUID) {
			t.Errorf("user_cuid %q is not a cuid", c.UserCUID)
		}

		given := f.license(t, "Grace Hopper", "laptop-7f3a")
		if given.InstanceID != "laptop-7f3a" {
			t.Errorf("a given instance id came back as %q", given.InstanceID)
		}
		if given.LicenseKey == c.LicenseKey || given.UserCUID == c.UserCUID {
			t.Errorf("two licenses share a key or an account: %+v %+v", c, given)
		}
	})
}

func TestStoreHoldsOnlyHashes(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := setup(t, b)
		c := f.license(t, "Ada Lovelace", "")
		second, err := f.core.AddInstance(ctx, c.LicenseKey, "")
		if err != nil {
			t.Fatal(err)
		}
		tok := f.login(t, c)

		secrets := map[string]string{
			"license key": c.LicenseKey, "instance id": c.InstanceID,
			"second instance id": second.InstanceID, "token": tok.Token,
		}
		for _, table := range []string{"accounts", "licenses", "activations", "sessions"} {
			for _, row := range f.rows(t, table) {
				for col, cell := range row {
					for what, s := range secrets {
						// The random part alone must not be stored either (say, with the prefix cut).
						_, random, _ := strings.Cut(s, "_")
						if strings.Contains(cell, s) || strings.Contains(cell, random) {
							t.Errorf("%s.%s holds the %s", table, col, what)
						}
					}
				}
			}
		}

		lic := f.rows(t, "licenses")
		if len(lic) != 1 || lic[0]["key_hash"] != secret.Hash(c.LicenseKey) {
			t.Errorf("licenses = %v, want one row with key_hash = Hash(license key)", lic)
		}
		acts := map[string]bool{}
		for _, r := range f.rows(t, "activations") {
			acts[r["instance_hash"]] = true
		}
		if len(acts) != 2 || !acts[secret.Hash(c.InstanceID)] || !acts[secret.Hash(second.InstanceID)] {
			t.Errorf("activation hashes = %v, want Hash of both instance ids", acts)
		}
		sess := f.rows(t, "sessions")
		if len(sess) != 1 || sess[0]["token_hash"] != secret.Hash(tok.Token) {
			t.Errorf("sessions = %v, want one row with token_hash = Hash(token)", sess)
		}
	})
}

func TestAuthenticateIssuesATwoHourToken(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := setup(t, b)
		c := f.license(t, "Ada Lovelace", "")
		issued := f.clock.Now()
		tok := f.login(t, c)
		if !strings.HasPrefix(tok.Token, "snt_") || len(tok.Token) < len("snt_")+43 {
			t.Errorf("token %q: want snt_ and 256 random bits", tok.Token)
		}
		if want := issued.UTC().Truncate(time.Millisecond).Add(2 * time.Hour); !tok.ExpiresAt.Equal(want) {
			t.Errorf("ExpiresAt = %s, want %s (two hours, to the millisecond)", tok.ExpiresAt, want)
		}
		if tok.Account.CUID != c.UserCUID || tok.Account.Name != "Ada Lovelace" || tok.Account.Email != "ada.lovelace@example.com" {
			t.Errorf("token account = %+v, want the license's account %s", tok.Account, c.UserCUID)
		}
		p, err := f.core.Verify(ctx, tok.Token)
		if err != nil || p.AccountCUID != c.UserCUID {
			t.Fatalf("Verify = (%+v, %v), want the license's account", p, err)
		}
		if again := f.login(t, c); again.Token == tok.Token {
			t.Error("two logins returned the same token")
		}
	})
}

func TestAuthenticateRejectsBadCredentials(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := setup(t, b)
		ada, grace := f.license(t, "Ada Lovelace", ""), f.license(t, "Grace Hopper", "")
		gone := f.license(t, "Former Customer", "")
		if err := f.core.Deactivate(ctx, gone.LicenseKey); err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			name, key, instance string
		}{
			{"an unknown license key is unauthorized", secret.New("snk_", 32), ada.InstanceID},
			{"an instance that is no activation is unauthorized", ada.LicenseKey, secret.New("sni_", 16)},
			{"another license's instance is unauthorized", ada.LicenseKey, grace.InstanceID},
			{"another license's key is unauthorized", grace.LicenseKey, ada.InstanceID},
			{"key and instance swapped are unauthorized", ada.InstanceID, ada.LicenseKey},
			{"an empty key is unauthorized", "", ada.InstanceID},
			{"an empty instance is unauthorized", ada.LicenseKey, ""},
			{"a deactivated license is unauthorized", gone.LicenseKey, gone.InstanceID},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				tok, err := f.core.Authenticate(ctx, tc.key, tc.instance)
				if !errors.Is(err, account.ErrUnauthorized) {
					t.Fatalf("Authenticate = (%+v, %v), want ErrUnauthorized", tok, err)
				}
			})
		}
		// Deactivating one license leaves the others working.
		f.login(t, ada)
		f.login(t, grace)
	})
}

func TestVerifyExpiresAtTwoHours(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := setup(t, b)
		c := f.license(t, "Ada Lovelace", "")
		// Start on a whole millisecond, the precision tokens are issued with, so that two
		// hours after issue is exactly the token's expires_at.
		f.clock.Advance(time.Millisecond - time.Duration(f.clock.Now().Nanosecond())%time.Millisecond)
		issued := f.clock.Now()
		tok := f.login(t, c)
		if !tok.ExpiresAt.Equal(issued.Add(2 * time.Hour)) {
			t.Fatalf("ExpiresAt = %s, want issue time + 2h = %s", tok.ExpiresAt, issued.Add(2*time.Hour))
		}

		steps := []struct {
			name string
			at   time.Duration // since the token was issued
			ok   bool
		}{
			{"a token is valid when issued", 0, true},
			{"a token is valid after one hour", time.Hour, true},
			{"a token is valid a millisecond before two hours", 2*time.Hour - time.Millisecond, true},
			{"a token is expired at exactly two hours", 2 * time.Hour, false},
			{"a token stays expired after two hours", 3 * time.Hour, false},
		}
		for _, s := range steps {
			f.clock.Advance(issued.Add(s.at).Sub(f.clock.Now()))
			p, err := f.core.Verify(ctx, tok.Token)
			switch {
			case s.ok && (err != nil || p.AccountCUID != c.UserCUID):
				t.Errorf("%s: Verify = (%+v, %v), want the account", s.name, p, err)
			case !s.ok && !errors.Is(err, account.ErrUnauthorized):
				t.Errorf("%s: Verify = (%+v, %v), want ErrUnauthorized", s.name, p, err)
			}
		}
		// There is no refresh: a new login gives a new two hours.
		if _, err := f.core.Verify(ctx, f.login(t, c).Token); err != nil {
			t.Errorf("a token issued after the first expired: %v", err)
		}
	})
}

func TestVerifyRejectsBadTokens(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := setup(t, b)
		c := f.license(t, "Ada Lovelace", "")
		tok := f.login(t, c)
		other := f.license(t, "Grace Hopper", "")
		otherTok := f.login(t, other)
		if err := f.core.Deactivate(ctx, other.LicenseKey); err != nil {
			t.Fatal(err)
		}
		cases := []struct{ name, token string }{
			{"an unknown token is unauthorized", secret.New("snt_", 32)},
			{"an empty token is unauthorized", ""},
			{"a license key is not a token", c.LicenseKey},
			{"a token's hash is not a token", secret.Hash(tok.Token)},
			{"a token of a deactivated license is unauthorized", otherTok.Token},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				if p, err := f.core.Verify(ctx, tc.token); !errors.Is(err, account.ErrUnauthorized) {
					t.Fatalf("Verify = (%+v, %v), want ErrUnauthorized", p, err)
				}
			})
		}
		if _, err := f.core.Verify(ctx, tok.Token); err != nil {
			t.Errorf("deactivating another license broke this token: %v", err)
		}
	})
}

func TestAddInstance(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := setup(t, b)
		c := f.license(t, "Ada Lovelace", "")

		added, err := f.core.AddInstance(ctx, c.LicenseKey, "")
		if err != nil {
			t.Fatal(err)
		}
		if added.LicenseKey != c.LicenseKey || added.UserCUID != c.UserCUID || !strings.HasPrefix(added.InstanceID, "sni_") || added.InstanceID == c.InstanceID {
			t.Fatalf("AddInstance = %+v, want a new sni_ instance of license %+v", added, c)
		}
		if tok := f.login(t, added); tok.Account.CUID != c.UserCUID {
			t.Errorf("the new activation logs in to account %s, want %s", tok.Account.CUID, c.UserCUID)
		}
		f.login(t, c) // The first activation still works.

		again, err := f.core.AddInstance(ctx, c.LicenseKey, added.InstanceID)
		if err != nil || again != added {
			t.Fatalf("repeating AddInstance = (%+v, %v), want the same credentials", again, err)
		}
		if n := f.count(t, "activations"); n != 2 {
			t.Errorf("%d activations after adding the same instance twice, want 2", n)
		}
		f.login(t, added)

		if _, err := f.core.AddInstance(ctx, secret.New("snk_", 32), ""); !errors.Is(err, account.ErrNotFound) {
			t.Errorf("AddInstance to an unknown license = %v, want ErrNotFound", err)
		}
		if _, err := f.core.AddInstance(ctx, c.LicenseKey, "my laptop"); !errors.Is(err, account.ErrInvalid) {
			t.Errorf("AddInstance with a space in the id = %v, want ErrInvalid", err)
		}
	})
}

func TestDeactivate(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := setup(t, b)
		if err := f.core.Deactivate(ctx, secret.New("snk_", 32)); !errors.Is(err, account.ErrNotFound) {
			t.Errorf("Deactivate of an unknown license = %v, want ErrNotFound", err)
		}
		c := f.license(t, "Ada Lovelace", "")
		if err := f.core.Deactivate(ctx, c.LicenseKey); err != nil {
			t.Fatal(err)
		}
		if _, err := f.core.Authenticate(ctx, c.LicenseKey, c.InstanceID); !errors.Is(err, account.ErrUnauthorized) {
			t.Errorf("Authenticate after Deactivate = %v, want ErrUnauthorized", err)
		}
	})
}

func TestCreateLicenseRejectsInvalidInput(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := setup(t, b)
		cases := []struct {
			name, person, email, instance string
		}{
			{"an empty name is invalid", "", "ada@example.com", ""},
			{"a blank name is invalid", "   ", "ada@example.com", ""},
			{"a name over 100 characters is invalid", strings.Repeat("a", 101), "ada@example.com", ""},
			{"an email without @ is invalid", "Ada", "not-an-email", ""},
			{"an empty email is invalid", "Ada", "", ""},
			{"an email with a display name is invalid", "Ada", "Ada <ada@example.com>", ""},
			{"an instance id with a space is invalid", "Ada", "ada@example.com", "my laptop"},
			{"an instance id with a tab is invalid", "Ada", "ada@example.com", "my\tlaptop"},
			{"an instance id over 200 characters is invalid", "Ada", "ada@example.com", strings.Repeat("i", 201)},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				if c, err := f.core.CreateLicense(ctx, tc.person, tc.email, tc.instance); !errors.Is(err, account.ErrInvalid) {
					t.Fatalf("CreateLicense(%q, %q, %q) = (%+v, %v), want ErrInvalid", tc.person, tc.email, tc.instance, c, err)
				}
			})
		}
		if n := f.count(t, "accounts"); n != 0 {
			t.Errorf("rejected input stored %d accounts", n)
		}
		// The boundaries are inclusive, and the name counts characters, not bytes.
		c := f.license(t, strings.Repeat("é", 100), strings.Repeat("i", 200))
		if name, _, err := f.store.Profile(ctx, c.UserCUID); err != nil || name != strings.Repeat("é", 100) {
			t.Errorf("a 100-character name was stored as %q (%v)", name, err)
		}
	})
}

// specQuota is the API's image storage per account (docs/api.md "Limits"), the default of
// SHARE_IMAGE_QUOTA_BYTES.
const specQuota = 1_000_000_000

func TestProfileOfANewAccount(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := setup(t, b)
		c := f.license(t, "  Ada Lovelace  ", "")
		name, p, err := f.store.Profile(ctx, c.UserCUID)
		if err != nil {
			t.Fatal(err)
		}
		if name != "Ada Lovelace" || p.Settings != account.DefaultSettings("Ada Lovelace") || p.Storage.ImageBytesUsed != 0 {
			t.Fatalf("Profile = (%q, %+v), want the trimmed name, the default settings and no image bytes used", name, p)
		}

		// GET /api/user/settings answers through the use case, which adds the quota.
		got, err := account.NewSettingsCore(f.store, specQuota, nil).Get(ctx, c.UserCUID)
		if err != nil {
			t.Fatal(err)
		}
		want := account.Profile{
			Settings: account.DefaultSettings("Ada Lovelace"),
			Storage:  account.Storage{ImageBytesUsed: 0, ImageLimitBytes: specQuota},
		}
		if got != want {
			t.Fatalf("Get = %+v, want %+v", got, want)
		}
	})
}

// set is a settings change that stores s whatever the current settings are.
func set(s account.Settings) func(string, account.Profile) (account.Settings, error) {
	return func(string, account.Profile) (account.Settings, error) { return s, nil }
}

func TestChangeSettingsRoundTrip(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := setup(t, b)
		ada, grace := f.license(t, "Ada Lovelace", ""), f.license(t, "Grace Hopper", "")
		s := account.Settings{Name: "A. L. 🧮", ShowAuthor: false, Theme: "dark", AccentColor: "#0a0b0c", Font: "mono", Indexable: true}
		if p, err := f.store.ChangeSettings(ctx, ada.UserCUID, set(s)); err != nil || p.Settings != s {
			t.Fatalf("ChangeSettings = (%+v, %v), want the stored settings", p, err)
		}
		name, p, err := f.store.Profile(ctx, ada.UserCUID)
		if err != nil || p.Settings != s || name != "Ada Lovelace" {
			t.Fatalf("after ChangeSettings Profile = (%q, %+v, %v), want (%q, %+v): the display name is not the license name", name, p.Settings, err, "Ada Lovelace", s)
		}
		refused := errors.New("refused")
		if _, err := f.store.ChangeSettings(ctx, ada.UserCUID, func(string, account.Profile) (account.Settings, error) {
			return account.DefaultSettings("x"), refused
		}); !errors.Is(err, refused) {
			t.Fatalf("ChangeSettings with a failing change = %v, want its error", err)
		}
		if _, p, _ := f.store.Profile(ctx, ada.UserCUID); p.Settings != s {
			t.Fatalf("a failed change was stored: %+v", p.Settings)
		}
		if _, other, _ := f.store.Profile(ctx, grace.UserCUID); other.Settings != account.DefaultSettings("Grace Hopper") {
			t.Errorf("saving Ada's settings changed Grace's: %+v", other.Settings)
		}

		// Through the use case: PATCH keeps the saved fields, PUT resets to the license name.
		core := account.NewSettingsCore(f.store, specQuota, nil)
		patched, err := core.Change(ctx, ada.UserCUID, account.SettingsChange{Theme: new("light")})
		wantPatched := s
		wantPatched.Theme = "light"
		if err != nil || patched.Settings != wantPatched || patched.Storage != (account.Storage{ImageLimitBytes: specQuota}) {
			t.Fatalf("PATCH theme = (%+v, %v), want the saved settings with a light theme and the storage figures", patched, err)
		}
		if _, err := core.Change(ctx, ada.UserCUID, account.SettingsChange{Replace: true}); err != nil {
			t.Fatal(err)
		}
		if got, err := core.Get(ctx, ada.UserCUID); err != nil || got.Settings != account.DefaultSettings("Ada Lovelace") {
			t.Fatalf("after PUT {} Get = (%+v, %v), want the defaults for Ada Lovelace", got.Settings, err)
		}
		if _, err := core.Change(ctx, ada.UserCUID, account.SettingsChange{Font: new("comic")}); err == nil {
			t.Fatal("an invalid font was accepted")
		}
		if got, _ := core.Get(ctx, ada.UserCUID); got.Settings.Font != "sans" {
			t.Errorf("a rejected change was stored: font %q", got.Settings.Font)
		}
	})
}

func TestSettingsOfAnUnknownAccount(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := setup(t, b)
		unknown := cuid.New()
		if _, _, err := f.store.Profile(ctx, unknown); !errors.Is(err, account.ErrNotFound) {
			t.Errorf("Profile of an unknown account = %v, want ErrNotFound", err)
		}
		if _, err := f.store.ChangeSettings(ctx, unknown, set(account.DefaultSettings("x"))); !errors.Is(err, account.ErrNotFound) {
			t.Errorf("ChangeSettings of an unknown account = %v, want ErrNotFound", err)
		}
	})
}

func TestPurgeSessionsDeletesOnlyExpiredOnes(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		ctx := context.Background()
		clock := testkit.NewClock()
		store := accountdb.New(testkit.OpenDB(t, b), testkit.Changes())
		core := account.NewCore(store, clock.Now, nil)
		creds, err := core.CreateLicense(ctx, "Ada", "ada@example.com", "")
		if err != nil {
			t.Fatal(err)
		}
		login := func() string {
			tok, err := core.Authenticate(ctx, creds.LicenseKey, creds.InstanceID)
			if err != nil {
				t.Fatal(err)
			}
			return tok.Token
		}
		for range 3 {
			login()
		}
		clock.Advance(account.TokenLifetime + time.Minute)
		live := login()
		n, err := store.PurgeSessions(ctx, clock.Now(), 2)
		if err != nil || n != 3 {
			t.Fatalf("PurgeSessions = %d, %v; want the 3 expired sessions (in batches of 2)", n, err)
		}
		if _, err := core.Verify(ctx, live); err != nil {
			t.Errorf("the live session was purged: %v", err)
		}
		if n, err := store.PurgeSessions(ctx, clock.Now(), 2); err != nil || n != 0 {
			t.Errorf("a second purge = %d, %v; want nothing", n, err)
		}
	})
}
