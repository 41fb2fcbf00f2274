//go:build e2e || chaos

package sharenote_test

// Child processes of the tests that run the real binaries: the e2e test behind nginx and
// the fault tests of `make chaos`.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// commandEnv is the test process's environment without any sharenote or OpenTelemetry
// setting, plus config.
func commandEnv(config map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SHARE_") && !strings.HasPrefix(kv, "OTEL_") {
			env = append(env, kv)
		}
	}
	for k, v := range config {
		env = append(env, k+"="+v)
	}
	return env
}

// process is a child process whose output goes to a log file, shown when the test fails.
type process struct {
	name     string
	cmd      *exec.Cmd
	log      string
	extraLog string
	done     chan struct{}
	err      error
}

func startProcess(t *testing.T, name, bin string, args, env []string) *process {
	t.Helper()
	p := &process{name: name, log: filepath.Join(t.TempDir(), name+".log"), done: make(chan struct{})}
	f, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = f, f
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		f.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		if p.exited() {
			return
		}
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	t.Cleanup(func() {
		if t.Failed() {
			p.dumpLog(t)
		}
	})
	return p
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// waitFor polls ok until it holds, failing if the process exits or 30 s pass.
func (p *process) waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ok() {
		if p.exited() {
			t.Fatalf("%s exited before it was %s: %v", p.name, what, p.err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is not %s after 30s", p.name, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// terminate sends sig and requires a zero exit status within timeout.
func (p *process) terminate(t *testing.T, sig syscall.Signal, timeout time.Duration) {
	t.Helper()
	if p.exited() {
		t.Errorf("%s had already exited: %v", p.name, p.err)
		return
	}
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Errorf("signal %s: %v", p.name, err)
		return
	}
	select {
	case <-p.done:
		if p.err != nil {
			t.Errorf("%s exited with %v after %s, want status 0", p.name, p.err, sig)
		}
	case <-time.After(timeout):
		t.Errorf("%s did not exit within %v of %s", p.name, timeout, sig)
	}
}

func (p *process) dumpLog(t *testing.T) {
	for _, file := range []string{p.log, p.extraLog} {
		if file == "" {
			continue
		}
		b, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		if len(b) > 3000 {
			b = b[len(b)-3000:]
		}
		t.Logf("--- %s (%s), last lines:\n%s", p.name, filepath.Base(file), b)
	}
}
