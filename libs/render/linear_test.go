//go:build linux

package render

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// shapes are the inputs that took a render time quadratic in their length, or worse,
// before bounds and the fix of inline math: each is a unit repeated to the size of the
// note. The name says what goldmark, or an extension of ours, did again and again.
var shapes = []struct{ name, unit string }{
	{"unclosed link destinations", "[a](b"},
	{"unclosed image destinations", "![a](b"},
	{"unclosed angle destinations", "[a](<b"},
	{"unclosed link titles", "[a](b (\n"},
	{"links in unclosed wikilinks", "[[[[a](b)"},
	{"unclosed wikilinks", "[[a"},
	{"mismatched emphasis", "*a_"},
	{"mismatched emphasis, other way", "_a*"},
	{"mismatched emphasis over lines", "_a*\n"},
	{"nested block quotes", ">"},
	{"nested ordered lists", "1. "},
	{"unclosed inline math", " $a"},
	{"link reference definitions", "[a]: b\n"},
	{"shortcut references", "[a]\n"},
	{"footnotes that refer to no footnote", "[^a]: [^b]\n"},
}

// growingCodeSpans is runs of one backtick, two, three and so on, each followed by an
// "a": every run is longer than the one before, so goldmark's code span parser looks
// through the rest of the block for each.
func growingCodeSpans(size int) string {
	var b strings.Builder
	for i := 1; b.Len() < size; i++ {
		b.WriteString(strings.Repeat("`", i) + "a")
	}
	return b.String()[:size]
}

// renderTime is the shortest CPU time of n renders of src, without the deadline of
// Markdown. It is CPU time since the machines that run the tests are shared, so that a
// render's wall time there is mostly waiting; and the CPU time of the render's thread
// (with the garbage collection it assists), as a test before may have left a render
// running in the background (TestAParseThatRunsAwayIsCutAtTheDeadline does).
func renderTime(tb testing.TB, src string, n int) time.Duration {
	tb.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	best := time.Duration(1<<63 - 1)
	for range n {
		began := threadTime(tb)
		if _, err := render(context.Background(), src, nil); err != nil {
			tb.Fatal(err)
		}
		best = min(best, threadTime(tb)-began)
	}
	return best
}

// cpuTime is the CPU time the process has taken so far.
func cpuTime(tb testing.TB) time.Duration { return clock(tb, unix.CLOCK_PROCESS_CPUTIME_ID) }

// threadTime is the CPU time the calling thread has taken so far.
func threadTime(tb testing.TB) time.Duration { return clock(tb, unix.CLOCK_THREAD_CPUTIME_ID) }

// clock reads a CPU-time clock to the nanosecond the scheduler counts. Not getrusage:
// it gives a thread's time as sampled at the ticks, and on the VMs CI runs on it once
// read 512 renders of 20 µs each as no time at all.
func clock(tb testing.TB, id int32) time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(id, &ts); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ts.Nano())
}

// note is unit repeated to exactly size bytes.
func note(unit string, size int) string {
	return strings.Repeat(unit, size/len(unit)+1)[:size]
}

// linearity renders unit repeated to large bytes, and repeated to small bytes as many
// times as make large bytes too, and reports an error when the large note takes over
// ratio times the CPU time of the many small ones, plus slack: a render quadratic in its
// length takes large/small times as long. Both are rendered again until they take some
// tens of milliseconds, so that a few preemptions and a garbage collection do not
// decide; each takes the shortest of up to three tries; and the slack is for a busy,
// shared machine.
func linearity(tb testing.TB, unit string, small, large int, ratio float64, slack time.Duration) error {
	tb.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	a, b := note(unit, small), note(unit, large)
	reps := 1
	if once := renderTime(tb, b, 1); once < 40*time.Millisecond {
		reps = int(min(32, 40*time.Millisecond/max(once, time.Millisecond)))
	}
	var many, one time.Duration
	for try := 1; try <= 3; try++ {
		m, o := batchTime(tb, a, reps*large/small), batchTime(tb, b, reps)
		if try == 1 || m < many {
			many = m
		}
		if try == 1 || o < one {
			one = o
		}
		if float64(one-slack) <= ratio*float64(many) {
			return nil
		}
	}
	perKiB := func(d time.Duration) float64 { return float64(d) / float64(reps*large>>10) }
	return fmt.Errorf("%q: %.0f ns/KiB at %d KiB, %.0f ns/KiB at %d KiB: over %.0f times (plus %v)",
		unit, perKiB(many), small>>10, perKiB(one), large>>10, ratio, slack)
}

// batchTime is the CPU time of the calling thread for n renders of src; the caller has
// locked its goroutine to the thread.
func batchTime(tb testing.TB, src string, n int) time.Duration {
	tb.Helper()
	began := threadTime(tb)
	for range n {
		if _, err := render(context.Background(), src, nil); err != nil {
			tb.Fatal(err)
		}
	}
	return threadTime(tb) - began
}

func TestGrowingCodeSpansRenderInLinearTime(t *testing.T) {
	// Not a repeated unit, and a time that grows with the power 1.5 of the length
	// only: the CPU time of one note of 1 MiB against sixty-four of 16 KiB.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	small, large := growingCodeSpans(16<<10), growingCodeSpans(1<<20)
	for try := 1; try <= 3; try++ {
		many, one := batchTime(t, small, 64), batchTime(t, large, 1)
		if one <= 3*many+20*time.Millisecond {
			return
		}
		if try == 3 {
			t.Errorf("one note of 1 MiB took %v, sixty-four of 16 KiB %v", one, many)
		}
	}
}

func TestEachShapeRendersInLinearTime(t *testing.T) {
	for _, s := range shapes {
		t.Run(s.name, func(t *testing.T) {
			// Two spans of sizes, since a bound can end a quadratic stretch: before
			// the note's slack was shared, footnotes took 8 times as long per byte at
			// 64 KiB as at 16 and at 256 KiB.
			for _, kib := range [][2]int{{4, 64}, {16, 256}} {
				if err := linearity(t, s.unit, kib[0]<<10, kib[1]<<10, 5, 20*time.Millisecond); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// BenchmarkShapes reports the render time per KiB of each shape at four sizes, as wall
// time (ns/KiB) and as the process's CPU time (cpu-ns/KiB, steadier on a shared
// machine); linear means about the same figure at each size.
func BenchmarkShapes(b *testing.B) {
	for _, s := range shapes {
		for _, kib := range []int{16, 64, 256, 1024} {
			b.Run(fmt.Sprintf("%s/%dKiB", strings.ReplaceAll(s.name, " ", "_"), kib), func(b *testing.B) {
				src := note(s.unit, kib<<10)
				b.SetBytes(int64(len(src)))
				began := cpuTime(b)
				for b.Loop() {
					if _, err := render(context.Background(), src, nil); err != nil {
						b.Fatal(err)
					}
				}
				cpu := cpuTime(b) - began
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(kib), "ns/KiB")
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(kib), "cpu-ns/KiB")
			})
		}
	}
}
