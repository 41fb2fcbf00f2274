package clientcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sharenote/sharenote/libs/cli"
	"github.com/sharenote/sharenote/libs/client"
	"github.com/sharenote/sharenote/libs/wire"
)

// credentials is the token file: a session per server, so that a token is only ever sent
// to the server that issued it, and the server of the last login (the default). It never
// holds a license key.
type credentials struct {
	Default string                 `json:"default"`
	Servers map[string]*wire.Token `json:"servers"`
}

// configDir is the client's folder: $XDG_CONFIG_HOME/sharenote when set (read through the
// command's environment, on every system, as gh does), else os.UserConfigDir()/sharenote.
func configDir(getenv func(string) string) (string, error) {
	dir := getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(dir) {
		var err error
		if dir, err = os.UserConfigDir(); err != nil {
			return "", err
		}
	}
	return filepath.Join(dir, "sharenote"), nil
}

// loadCredentials reads the token file; a missing file is an empty one.
func loadCredentials(getenv func(string) string) (*credentials, error) {
	creds := &credentials{}
	if err := readPrivate(getenv, "credentials.json", creds); err != nil {
		return nil, err
	}
	if creds.Servers == nil {
		creds.Servers = map[string]*wire.Token{}
	}
	return creds, nil
}

// readPrivate reads the JSON file name of the client's folder into v; a missing file
// leaves v as it is.
func readPrivate(getenv func(string) string, name string, v any) error {
	dir, err := configDir(getenv)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, name)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w (remove the file to start afresh)", path, err)
	}
	return nil
}

// save writes the token file.
func (c *credentials) save(getenv func(string) string) error {
	return writePrivate(getenv, "credentials.json", c)
}

// writePrivate writes v as JSON to the file name of the client's folder, readable by its
// owner only, in a folder only its owner may enter; a rename replaces it whole, so a
// crash leaves the old file or the new one.
func writePrivate(getenv func(string) string, name string, v any) error {
	dir, err := configDir(getenv)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+name+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), filepath.Join(dir, name))
}

// server is the server a command talks to: --server, else SHARE_SERVER, else the server
// of the last login. There is no default: whatever listens on a default address would be
// sent the license key. Each is checked by checkServer.
func server(flagValue string, getenv func(string) string, creds *credentials) (string, error) {
	for _, s := range []string{flagValue, getenv("SHARE_SERVER"), creds.Default} {
		if s != "" {
			return checkServer(s)
		}
	}
	return "", fmt.Errorf("%w: no server: pass --server URL or set SHARE_SERVER, "+
		"e.g. export SHARE_SERVER=https://share.example.com (http://127.0.0.1:8080 for `make run`)", cli.ErrUsage)
}

// checkServer returns the server's URL without a trailing slash, or an error unless it
// is an https:// URL, or an http:// one to a loopback address: plain HTTP would carry the
// license key and the token across the network unencrypted. The refusal comes before
// anything is dialed.
func checkServer(raw string) (string, error) {
	s := strings.TrimRight(raw, "/")
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" ||
		u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("%w: the server %q is not a URL such as https://share.example.com", cli.ErrUsage, raw)
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		return "", fmt.Errorf("%w: the server %s is plain http:// to another machine, which would send the license key and token unencrypted: "+
			"use https://, or http:// only to 127.0.0.1, ::1 or localhost", cli.ErrUsage, raw)
	}
	return s, nil
}

// isLoopback reports whether host is "localhost" or an address of 127.0.0.0/8 or ::1.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// licenseFromEnv returns SHARE_LICENSE_KEY and SHARE_INSTANCE_ID, and whether both are set.
func licenseFromEnv(getenv func(string) string) (key, instance string, ok bool) {
	key, instance = getenv("SHARE_LICENSE_KEY"), getenv("SHARE_INSTANCE_ID")
	return key, instance, key != "" && instance != ""
}

// login exchanges the license for a token and stores it as the session of server, which
// becomes the default.
func login(ctx context.Context, env cli.Env, creds *credentials, server, key, instance string) (*wire.Token, error) {
	tok, err := (&client.Client{BaseURL: server}).Login(ctx, key, instance)
	if err != nil {
		return nil, err
	}
	creds.Servers[server] = tok
	creds.Default = server
	return tok, creds.save(env.Getenv)
}

// renewBefore is how long before its expiry a cached token is no longer used: a command
// that starts with it should not see it expire halfway.
const renewBefore = time.Minute

// withSession runs fn with a client holding the session of the command's server. A
// missing or expired session is renewed from SHARE_LICENSE_KEY and SHARE_INSTANCE_ID when
// both are set, else the error says to run `sharenote login`; a token the server refuses
// (401) is renewed the same way and fn runs once more, since nothing was done.
func withSession(ctx context.Context, env cli.Env, serverFlag string, fn func(*client.Client) error) error {
	creds, err := loadCredentials(env.Getenv)
	if err != nil {
		return err
	}
	srv, err := server(serverFlag, env.Getenv, creds)
	if err != nil {
		return err
	}
	key, instance, canRenew := licenseFromEnv(env.Getenv)
	tok := creds.Servers[srv]
	renewed := false
	if tok == nil || time.Until(tok.ExpiresAt.Time) < renewBefore {
		if !canRenew {
			return notLoggedIn(srv, tok != nil)
		}
		if tok, err = login(ctx, env, creds, srv, key, instance); err != nil {
			return err
		}
		renewed = true
	}
	c := &client.Client{BaseURL: srv, Token: tok.Token, Budget: &client.Budget{}}
	err = fn(c)
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnauthorized {
		return err
	}
	if !canRenew || renewed {
		return notLoggedIn(srv, true)
	}
	if tok, err = login(ctx, env, creds, srv, key, instance); err != nil {
		return err
	}
	c.Token = tok.Token
	return fn(c)
}

func notLoggedIn(server string, expired bool) error {
	if expired {
		return fmt.Errorf("the session for %s has expired or was revoked: run `sharenote login`", server)
	}
	return fmt.Errorf("not logged in to %s: run `sharenote login`", server)
}
