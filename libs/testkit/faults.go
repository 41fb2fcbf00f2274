package testkit

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/sharenote/sharenote/libs/db"
)

// outage gives a throw-away server of one test the Start and Stop with which the test
// sees how the service lives through an outage of it: the server restarts on the same
// port and data.
type outage struct {
	t *testing.T
	s restartable
}

// restartable is a throw-away server that an outage stops and starts.
type restartable interface {
	start() error // starts the server and waits until it is ready
	kill()        // kills it, as a crash would, and waits; nothing when it is not running
	remove()      // stops it and removes its data
}

// startOutage makes a server with create for t, removes it when the test ends, and
// starts it.
func startOutage[S restartable](t *testing.T, create func() (S, error)) (S, outage) {
	t.Helper()
	s, err := create()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.remove)
	o := outage{t: t, s: s}
	o.Start()
	return s, o
}

// Start starts the server (again) and waits until it is ready.
func (o outage) Start() {
	o.t.Helper()
	if err := o.s.start(); err != nil {
		o.t.Fatal(err)
	}
}

// Stop kills the server, as a crash would; the data stays for the next Start. It does
// nothing when the server is not running.
func (o outage) Stop() { o.s.kill() }

// RedisProcess is a throw-away redis-server of one test, which the test may stop and
// start again on the same port to see how the service lives through a Redis outage.
type RedisProcess struct {
	// URL is the server's redis:// URL; it stays the same across restarts.
	URL string
	outage
}

// StartRedis starts a throw-away Redis for t and stops it when the test ends.
func StartRedis(t *testing.T) *RedisProcess {
	t.Helper()
	r, o := startOutage(t, func() (*redisInstance, error) { return &redisInstance{port: freePort()}, nil })
	return &RedisProcess{URL: redisURLOf(r.port), outage: o}
}

// redisInstance is a redis-server without persistence on a port and, while it runs, its
// process.
type redisInstance struct {
	port int
	process
}

func (r *redisInstance) start() error {
	cmd, err := launchRedis(r.port)
	if err != nil {
		return err
	}
	r.cmd = cmd
	return nil
}

func (r *redisInstance) remove() { r.kill() }

// process is the process of a throw-away server while it runs.
type process struct{ cmd *exec.Cmd }

// kill kills the process, as a crash would, and waits for it; it does nothing when
// none runs.
func (p *process) kill() {
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Kill()
	_, _ = p.cmd.Process.Wait()
	p.cmd = nil
}

// PostgresProcess is a throw-away Postgres server of one test, which the test may stop
// and start again on the same port and data to see how the service lives through a
// database outage.
type PostgresProcess struct {
	// URL is the maintenance database's URL; it stays the same across restarts.
	URL string
	outage
}

// StartPostgres initialises and starts a throw-away Postgres for t, and removes it when
// the test ends.
func StartPostgres(t *testing.T) *PostgresProcess {
	t.Helper()
	c, o := startOutage(t, newCluster)
	return &PostgresProcess{URL: c.url(), outage: o}
}

// NewDatabase creates a migrated database on the server and returns its URL; it goes
// with the server when the test ends.
func (p *PostgresProcess) NewDatabase(t *testing.T) string {
	t.Helper()
	admin, err := gorm.Open(postgres.Open(p.URL), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(admin)
	name := randomName("sntest_")
	if err := admin.Exec("CREATE DATABASE " + name).Error; err != nil {
		t.Fatal(err)
	}
	u := withDatabase(p.URL, name)
	migrate(t, u)
	return u
}

// ForRequest reports whether ctx is (or derives from) the context net/http made for a
// request it serves, which carries http.LocalAddrContextKey: a background job's is not.
func ForRequest(ctx context.Context) bool {
	return ctx != nil && ctx.Value(http.LocalAddrContextKey) != nil
}

// CountQueries counts every statement gdb runs from now on (queries, rows, raw SQL and
// writes) for requests (ForRequest), through gorm callbacks. Register it before the
// traffic it measures.
func CountQueries(t testing.TB, gdb *gorm.DB) *atomic.Int64 {
	t.Helper()
	var n atomic.Int64
	count := func(d *gorm.DB) {
		if ForRequest(d.Statement.Context) {
			n.Add(1)
		}
	}
	cb := gdb.Callback()
	for _, err := range []error{
		cb.Query().Before("gorm:query").Register("testkit:count_query", count),
		cb.Row().Before("gorm:row").Register("testkit:count_row", count),
		cb.Raw().Before("gorm:raw").Register("testkit:count_raw", count),
		cb.Create().Before("gorm:create").Register("testkit:count_create", count),
		cb.Update().Before("gorm:update").Register("testkit:count_update", count),
		cb.Delete().Before("gorm:delete").Register("testkit:count_delete", count),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return &n
}

// MonitorRedis counts the commands the Redis at redisURL executes from now on whose
// text contains substr (a test's key prefix), with Redis's own MONITOR, until the test
// ends. It returns once the monitor is listening.
func MonitorRedis(t testing.TB, redisURL, substr string) *atomic.Int64 {
	t.Helper()
	u, err := url.Parse(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", u.Host, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	if _, err := conn.Write([]byte("MONITOR\r\n")); err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(conn)
	if line, err := rd.ReadString('\n'); err != nil || !strings.HasPrefix(line, "+OK") {
		t.Fatalf("redis MONITOR: %q %v", line, err)
	}
	var n atomic.Int64
	go func() {
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				return
			}
			if strings.Contains(line, substr) {
				n.Add(1)
			}
		}
	}()
	return &n
}

// Meanwhile calls read every 5 ms in the background, timing each call, until the
// returned stop is called; stop reports how many calls ran and the slowest. A test
// proves with it that other work leaves a reader unharmed.
func Meanwhile(t testing.TB, read func() error) (stop func() (n int, slowest time.Duration)) {
	t.Helper()
	done := make(chan struct{})
	var n int
	var slowest time.Duration
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-done:
				return
			default:
			}
			began := time.Now()
			if err := read(); err != nil {
				t.Errorf("read meanwhile: %v", err)
				return
			}
			slowest = max(slowest, time.Since(began))
			n++
			time.Sleep(5 * time.Millisecond)
		}
	}()
	return func() (int, time.Duration) {
		close(done)
		<-finished
		return n, slowest
	}
}
