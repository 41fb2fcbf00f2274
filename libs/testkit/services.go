// Package testkit gives tests real infrastructure: a fresh Postgres database, an
// isolated Redis key space and an S3 bucket per test, the embedded default (SQLite,
// in-process limits, files) for the same suites, and a helper that serves targets on
// random ports.
//
// Servers are found in this order: SHARE_TEST_DATABASE_URL / SHARE_TEST_REDIS_URL; the
// local servers on 127.0.0.1:5432 and 127.0.0.1:6379; throw-away servers started from
// local binaries (initdb/postgres, redis-server). Buckets are made in SHARE_TEST_S3_URL's
// server or in a throw-away MinIO, from the binary `make minio` builds. If none is
// possible the test fails with one line naming what to install.
package testkit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/sharenote/sharenote/libs/cuid"
)

const (
	localPostgres = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	localRedis    = "redis://127.0.0.1:6379/0"
)

var (
	pgOnce, redisOnce sync.Once
	pgURL, redisURL   string
	pgErr, redisErr   error
	cleanupMu         sync.Mutex
	cleanups          []func()
)

// findServer returns the URL of a server, in this order: the variable env names, local
// when something answers on addr, or a throw-away server that start starts.
func findServer(env, addr, local string, start func() (string, error)) (string, error) {
	if u := os.Getenv(env); u != "" {
		return u, nil
	}
	if answers(addr) {
		return local, nil
	}
	return start()
}

// postgresServer returns the URL of a Postgres server's maintenance database.
func postgresServer() (string, error) {
	pgOnce.Do(func() {
		pgURL, pgErr = findServer("SHARE_TEST_DATABASE_URL", "127.0.0.1:5432", localPostgres, startPostgres)
	})
	return pgURL, pgErr
}

// redisServer returns the URL of a Redis server.
func redisServer() (string, error) {
	redisOnce.Do(func() {
		redisURL, redisErr = findServer("SHARE_TEST_REDIS_URL", "127.0.0.1:6379", localRedis, startRedis)
	})
	return redisURL, redisErr
}

func answers(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}

// startPostgres initialises a throw-away cluster in a temporary folder and starts it on a
// free port, for the whole test binary.
func startPostgres() (string, error) {
	c, err := newCluster()
	if err != nil {
		return "", err
	}
	addCleanup(c.remove)
	if err := c.start(); err != nil {
		return "", err
	}
	return c.url(), nil
}

// cluster is a throw-away Postgres cluster: a data folder and, while it runs, its server.
type cluster struct {
	dir, data string
	port      int
	bin       string
	prefix    []string // runuser -u postgres -- when running as root
	srv       *exec.Cmd
}

// newCluster initialises a cluster in a temporary folder. Postgres refuses to run as
// root, so as root it runs as the postgres user.
func newCluster() (*cluster, error) {
	bin := findBinary("initdb", "/usr/lib/postgresql/*/bin")
	if bin == "" {
		return nil, fmt.Errorf("no Postgres: set SHARE_TEST_DATABASE_URL, run one on 127.0.0.1:5432, or install it (apt-get install postgresql)")
	}
	dir, err := os.MkdirTemp("", "sharenote-pg-")
	if err != nil {
		return nil, err
	}
	c := &cluster{dir: dir, data: filepath.Join(dir, "data"), port: freePort(), bin: filepath.Dir(bin)}
	if os.Geteuid() == 0 {
		c.prefix = []string{"runuser", "-u", "postgres", "--"}
		if err := exec.Command("chown", "postgres:postgres", dir).Run(); err != nil {
			return nil, fmt.Errorf("chown throw-away postgres dir: %w", err)
		}
	}
	if out, err := c.command("initdb", "-D", c.data, "-U", "postgres", "--auth=trust", "-E", "UTF8").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	return c, nil
}

func (c *cluster) command(name string, args ...string) *exec.Cmd {
	full := append(append(append([]string{}, c.prefix...), filepath.Join(c.bin, name)), args...)
	return exec.Command(full[0], full[1:]...)
}

func (c *cluster) url() string {
	return "postgres://postgres@127.0.0.1:" + strconv.Itoa(c.port) + "/postgres?sslmode=disable"
}

// start starts the server and waits until it takes queries.
func (c *cluster) start() error {
	c.srv = c.command("postgres", "-D", c.data, "-p", strconv.Itoa(c.port), "-k", c.dir, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off")
	// Its own process group, so that a signal reaches postgres behind runuser.
	c.srv.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.srv.Start(); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	// The port opens before Postgres accepts sessions (57P03, "starting up"): wait for a
	// real query to succeed.
	if addr := "127.0.0.1:" + strconv.Itoa(c.port); !waitFor(addr) || !waitForQuery(c.url()) {
		return fmt.Errorf("throw-away postgres did not start on %s", addr)
	}
	return nil
}

// stop signals the server's process group and waits for it: SIGINT is Postgres's fast
// shutdown, SIGKILL a crash.
func (c *cluster) stop(sig syscall.Signal) {
	if c.srv == nil {
		return
	}
	_ = syscall.Kill(-c.srv.Process.Pid, sig)
	_, _ = c.srv.Process.Wait()
	c.srv = nil
}

// kill stops the server as a crash would; the data stays.
func (c *cluster) kill() { c.stop(syscall.SIGKILL) }

// remove stops the server (Postgres's fast shutdown) and removes the cluster's folder.
func (c *cluster) remove() {
	c.stop(syscall.SIGINT)
	_ = os.RemoveAll(c.dir)
}

// startRedis starts a throw-away redis-server without persistence on a free port.
func startRedis() (string, error) {
	port := freePort()
	srv, err := launchRedis(port)
	if err != nil {
		return "", err
	}
	addCleanup(func() { _ = srv.Process.Kill(); _, _ = srv.Process.Wait() })
	return redisURLOf(port), nil
}

// launchRedis starts redis-server without persistence on port and waits until it answers.
func launchRedis(port int) (*exec.Cmd, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("no Redis: set SHARE_TEST_REDIS_URL, run one on 127.0.0.1:6379, or install it (apt-get install redis-server)")
	}
	srv := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := srv.Start(); err != nil {
		return nil, fmt.Errorf("start redis: %w", err)
	}
	if addr := "127.0.0.1:" + strconv.Itoa(port); !waitFor(addr) {
		_ = srv.Process.Kill()
		_, _ = srv.Process.Wait()
		return nil, fmt.Errorf("throw-away redis did not start on %s", addr)
	}
	return srv, nil
}

func redisURLOf(port int) string { return "redis://127.0.0.1:" + strconv.Itoa(port) + "/0" }

func findBinary(name, globDir string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	matches, _ := filepath.Glob(filepath.Join(globDir, name))
	if len(matches) == 0 {
		return ""
	}
	return matches[len(matches)-1]
}

// FreeAddr returns a loopback address with a port nothing listens on right now, for a
// process a test starts.
func FreeAddr() string { return "127.0.0.1:" + strconv.Itoa(freePort()) }

// freePort returns a port that nothing listens on, below the kernel's ephemeral range:
// a port the kernel handed out for :0 could be handed out again, to another test's
// listener or to any outgoing connection's local end, before the process the test starts
// binds it. Below the range only another test's random pick can take it first.
func freePort() int {
	low := ephemeralLow()
	for {
		p := low/2 + rand.IntN(low/2)
		if ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p)); err == nil {
			_ = ln.Close()
			return p
		}
	}
}

// ephemeralLow is the first port of the kernel's ephemeral range (32768 where it cannot
// be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if f := strings.Fields(string(b)); err == nil && len(f) == 2 {
		if n, err := strconv.Atoi(f[0]); err == nil && n >= 4096 {
			return n
		}
	}
	return 32768
}

func waitFor(addr string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		if answers(addr) {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

func waitForQuery(u string) bool {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if gdb, err := gorm.Open(postgres.Open(u), &gorm.Config{Logger: logger.Discard}); err == nil {
			err = gdb.Exec("SELECT 1").Error
			if sqlDB, e := gdb.DB(); e == nil {
				_ = sqlDB.Close()
			}
			if err == nil {
				return true
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

func addCleanup(fn func()) {
	cleanupMu.Lock()
	defer cleanupMu.Unlock()
	cleanups = append(cleanups, fn)
}

// withDatabase returns serverURL with its database name replaced.
func withDatabase(serverURL, name string) string {
	u, err := url.Parse(serverURL)
	if err != nil {
		panic(err)
	}
	u.Path = "/" + name
	return u.String()
}

// randomName returns a lowercase identifier safe for database names and key prefixes.
func randomName(prefix string) string {
	return prefix + cuid.New()[:16]
}

// Responds reports whether a GET of url answers status now: what a test polls while a
// process it started comes up.
func Responds(url string, status int) bool {
	resp, err := http.Get(url)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == status
}
