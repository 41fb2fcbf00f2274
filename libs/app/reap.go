package app

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sharenote/sharenote/libs/accountdb"
	"github.com/sharenote/sharenote/libs/blob/blobstore"
	"github.com/sharenote/sharenote/libs/cli"
	"github.com/sharenote/sharenote/libs/config"
	"github.com/sharenote/sharenote/libs/logging"
	"github.com/sharenote/sharenote/libs/note"
)

// reapCommand is the reaper CronJob's one-shot run (`sharenote reap`): it
// deletes the objects and rows of images of unpublished notes, releases the quota
// reservations of uploads that died and deletes their objects, then the text and version
// snapshots of notes unpublished longer than SHARE_UNPUBLISHED_RETENTION, then expired
// sessions; with --orphans it first sweeps the whole object store for objects no row
// names. It prints {"images","bytes","batches","reservations","orphans","orphan_bytes",
// "notes","versions","sessions"}. With --every it reaps again after each interval until
// it is stopped, a line for each reap (compose's reaper, which has no CronJob), and a
// failed reap is logged, not the end.
var reapCommand = cli.Command{
	Name:     "reap",
	Summary:  "delete unpublished notes' images and text, and expired sessions",
	Details:  "Images of unpublished notes first, then their text and versions once the retention has passed, and expired sessions.",
	Operator: true,
	Usage:    "[flags]",
	Flags:    func(fs *flag.FlagSet) { new(reapFlags).define(fs) },
	Run:      runReap,
}

// reapFlags are the reap command's flags.
type reapFlags struct {
	batch, maxBatches int
	orphans           bool
	every             time.Duration
}

func (f *reapFlags) define(fs *flag.FlagSet) {
	fs.IntVar(&f.batch, "batch", 100, "at most this many images, notes or sessions per transaction")
	fs.IntVar(&f.maxBatches, "max-batches", 0, "stop the images, and the notes, after this many batches each (0: until none is left)")
	fs.BoolVar(&f.orphans, "orphans", false, "also list the whole object store and delete objects older than an upload may take that no image row names")
	fs.DurationVar(&f.every, "every", 0, "reap again after this long, until stopped (0: reap once and exit)")
}

func runReap(ctx context.Context, env cli.Env, args []string) error {
	fs := flag.NewFlagSet("reap", flag.ContinueOnError)
	var f reapFlags
	f.define(fs)
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	if f.batch < 1 || f.maxBatches < 0 || f.every < 0 {
		return fmt.Errorf("%w: --batch must be ≥ 1, --max-batches and --every ≥ 0", cli.ErrUsage)
	}
	cfg, err := config.Load(env.Getenv)
	if err != nil {
		return err
	}
	log := logging.New(env.Stderr, cfg.LogLevel, "reaper")
	blobs, err := blobstore.Open(ctx, cfg.BlobURL, env.Getenv)
	if err != nil {
		return fmt.Errorf("SHARE_BLOB_URL: %w", err)
	}
	return withStores(ctx, cfg, env.Stderr, blobs, func(s stores) error {
		reaper := note.NewReaper(s.notes, blobs)
		for {
			err := f.reapOnce(ctx, reaper, s.accounts, cfg.UnpublishedRetention, log, env.Stdout)
			if f.every == 0 {
				return err
			}
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(f.every):
			}
		}
	})
}

// reapOnce reaps once, logs what it deleted and prints it as a JSON line to out.
func (f reapFlags) reapOnce(ctx context.Context, reaper *note.Reaper, accounts *accountdb.Store, retention time.Duration, log *slog.Logger, out io.Writer) error {
	var r reaped
	var err error
	if f.orphans {
		r.swept, err = reaper.SweepOrphans(ctx, time.Now().Add(-note.UploadTimeout))
	}
	if err == nil {
		err = r.reap(ctx, reaper, accounts, time.Now(), retention, f.batch, f.maxBatches)
	}
	r.log(ctx, log, err)
	if err != nil {
		return err
	}
	orphans := r.orphans()
	return json.NewEncoder(out).Encode(map[string]any{"images": r.Images.Images, "bytes": r.Images.Bytes,
		"batches": r.Images.Batches, "reservations": r.Expired.Reservations, "orphans": orphans.Objects,
		"orphan_bytes": orphans.Bytes, "notes": r.Notes.Notes, "versions": r.Notes.Versions, "sessions": r.sessions})
}

// reaped is what one reap deleted.
type reaped struct {
	// Reaping are the images released and deleted, the expired reservations released
	// with the objects stored under them (Expired) and the notes purged.
	note.Reaping
	// swept are the objects --orphans found.
	swept    note.Orphans
	sessions int64
}

// reap runs the note reaper (note.Reaper.Run: released images, then expired reservations
// with their objects, then the notes unpublished more than retention before now), then
// deletes the sessions expired at now.
func (r *reaped) reap(ctx context.Context, reaper *note.Reaper, accounts *accountdb.Store, now time.Time, retention time.Duration, batch, maxBatches int) error {
	var err error
	if r.Reaping, err = reaper.Run(ctx, now, retention, batch, maxBatches); err != nil {
		return err
	}
	r.sessions, err = accounts.PurgeSessions(ctx, now, batch)
	return err
}

// orphans are the objects no row named that the reap deleted, however found.
func (r reaped) orphans() note.Orphans {
	return note.Orphans{Objects: r.Expired.Objects + r.swept.Objects, Bytes: r.Expired.Bytes + r.swept.Bytes}
}

// deletedAny reports whether the reap deleted or released something.
func (r reaped) deletedAny() bool {
	return r.Images.Images > 0 || r.Expired.Reservations > 0 || r.orphans().Objects > 0 || r.Notes.Notes > 0 ||
		r.Notes.Versions > 0 || r.sessions > 0
}

func (r reaped) log(ctx context.Context, log *slog.Logger, err error) {
	orphans := r.orphans()
	attrs := []any{"images", r.Images.Images, "bytes", r.Images.Bytes, "batches", r.Images.Batches,
		"reservations", r.Expired.Reservations, "orphans", orphans.Objects, "orphan_bytes", orphans.Bytes,
		"notes", r.Notes.Notes, "versions", r.Notes.Versions, "note_batches", r.Notes.Batches, "sessions", r.sessions}
	if err != nil {
		log.ErrorContext(ctx, "reap failed", append(attrs, "err", err)...)
		return
	}
	log.InfoContext(ctx, "reaped", attrs...)
}

// reapJob is the in-process reaper of a serving process that SHARE_REAP_INTERVAL asks for
// (the embedded default's stand-in for the CronJob) when one of its targets declares
// JobReap (notes), exporting
// what it deletes. It logs a reap that deleted something and returns a failure, which the
// process logs as the job's.
func reapJob(d Deps, reaper *note.Reaper, accountStore *accountdb.Store) Job {
	counters := make([]prometheus.Counter, len(reapCounters))
	for i, rc := range reapCounters {
		counters[i] = prometheus.NewCounter(prometheus.CounterOpts{Name: rc.name, Help: rc.help})
		d.Registry.MustRegister(counters[i])
	}
	return Job{Name: JobReap, Every: d.Config.ReapInterval, Run: func(ctx context.Context) error {
		var r reaped
		err := r.reap(ctx, reaper, accountStore, d.Now(), d.Config.UnpublishedRetention, 100, 0)
		for i, rc := range reapCounters {
			counters[i].Add(rc.count(r))
		}
		if err == nil && r.deletedAny() {
			r.log(ctx, d.Log, nil)
		}
		return err
	}}
}

// reapCounters are the in-process reaper's counters: what each counts of a reap.
var reapCounters = []struct {
	name, help string
	count      func(r reaped) float64
}{
	{"sharenote_reaper_images_deleted_total", "Images of unpublished notes deleted by the reaper.", func(r reaped) float64 { return float64(r.Images.Images) }},
	{"sharenote_reaper_bytes_deleted_total", "Image bytes deleted by the reaper.", func(r reaped) float64 { return float64(r.Images.Bytes) }},
	{"sharenote_reaper_notes_purged_total", "Notes unpublished longer than the retention whose text the reaper deleted.", func(r reaped) float64 { return float64(r.Notes.Notes) }},
	{"sharenote_reaper_versions_purged_total", "Version snapshots of those notes deleted by the reaper.", func(r reaped) float64 { return float64(r.Notes.Versions) }},
	{"sharenote_reaper_orphans_deleted_total", "Objects no image row named (of uploads that died) deleted by the reaper.", func(r reaped) float64 { return float64(r.Expired.Objects) }},
	{"sharenote_reaper_orphan_bytes_deleted_total", "Bytes of those objects.", func(r reaped) float64 { return float64(r.Expired.Bytes) }},
}
