package load

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of the CPU times in /proc/<pid>/stat (USER_HZ), 100 on every
// Linux architecture Go supports.
const clockTick = 10 * time.Millisecond

// namedCPU returns the CPU time (user and system) the local processes of each name (as
// /proc/<pid>/comm gives it) have used so far. The time of a process that has exited
// counts once its parent has waited for it: a named process whose parent has another
// name counts its children's time too, so that the backends a server forks and ends
// (Postgres's) stay counted.
func namedCPU(names []string) map[string]time.Duration {
	if len(names) == 0 {
		return nil
	}
	type proc struct {
		name        string
		ppid        string
		own, waited time.Duration
	}
	procs := map[string]proc{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // gone since the glob
		}
		s := string(b)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open || end+2 > len(s) {
			continue
		}
		name := s[open+1 : end]
		if !slices.Contains(names, name) {
			continue
		}
		// After the name: state, ppid, ..., utime (12th), stime, cutime, cstime.
		f := strings.Fields(s[end+2:])
		if len(f) < 15 {
			continue
		}
		ticks := func(i int) time.Duration {
			n, _ := strconv.ParseInt(f[i], 10, 64)
			return time.Duration(n) * clockTick
		}
		pid := filepath.Base(filepath.Dir(path))
		procs[pid] = proc{name: name, ppid: f[1], own: ticks(11) + ticks(12), waited: ticks(13) + ticks(14)}
	}
	out := make(map[string]time.Duration, len(names))
	for _, p := range procs {
		out[p.name] += p.own
		if parent, ok := procs[p.ppid]; !ok || parent.name != p.name {
			out[p.name] += p.waited
		}
	}
	return out
}
