package app

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"gorm.io/gorm"

	"github.com/sharenote/sharenote/libs/accountdb"
	"github.com/sharenote/sharenote/libs/config"
	"github.com/sharenote/sharenote/libs/logging"
	"github.com/sharenote/sharenote/libs/notedb"
)

// reapCommand is the reaper CronJob's one-shot run (`sharenote reap`): it
// deletes the bytes of images of unpublished notes, then the text and version snapshots
// of notes unpublished longer than SHARE_UNPUBLISHED_RETENTION, then expired sessions. It
// prints {"images","bytes","batches","notes","versions","sessions"}.
var reapCommand = Command{
	Name:    "reap",
	Summary: "delete unpublished notes' images, then their text and versions after the retention, and expired sessions",
	Usage:   "[flags]",
	Flags:   func(fs *flag.FlagSet) { new(reapFlags).define(fs) },
	Run:     runReap,
}

// reapFlags are the reap command's flags.
type reapFlags struct {
	batch, maxBatches int
}

func (f *reapFlags) define(fs *flag.FlagSet) {
	fs.IntVar(&f.batch, "batch", 100, "at most this many images, notes or sessions per transaction")
	fs.IntVar(&f.maxBatches, "max-batches", 0, "stop the images, and the notes, after this many batches each (0: until none is left)")
}

func runReap(ctx context.Context, env Env, args []string) error {
	fs := flag.NewFlagSet("reap", flag.ContinueOnError)
	var f reapFlags
	f.define(fs)
	if err := ParseFlags(fs, args); err != nil {
		return err
	}
	if f.batch < 1 || f.maxBatches < 0 {
		return fmt.Errorf("%w: --batch must be ≥ 1 and --max-batches ≥ 0", ErrUsage)
	}
	cfg, err := config.Load(env.Getenv)
	if err != nil {
		return err
	}
	log := logging.New(env.Stderr, cfg.LogLevel, "reaper")
	return WithDB(ctx, env, func(gdb *gorm.DB) error {
		r, err := reap(ctx, notedb.New(gdb), accountdb.New(gdb), time.Now(), cfg.UnpublishedRetention, f.batch, f.maxBatches)
		r.log(ctx, log, err)
		if err != nil {
			return err
		}
		return json.NewEncoder(env.Stdout).Encode(map[string]any{"images": r.images.Images, "bytes": r.images.Bytes,
			"batches": r.images.Batches, "notes": r.notes.Notes, "versions": r.notes.Versions, "sessions": r.sessions})
	})
}

// reaped is what one reap deleted.
type reaped struct {
	images   notedb.Reaped
	notes    notedb.Purged
	sessions int64
}

// reap deletes released images, then the notes unpublished more than retention before
// now (after their images, which must go first), then the sessions expired at now.
func reap(ctx context.Context, notes *notedb.Store, accounts *accountdb.Store, now time.Time, retention time.Duration, batch, maxBatches int) (reaped, error) {
	var r reaped
	var err error
	if r.images, err = notes.Reap(ctx, batch, maxBatches); err != nil {
		return r, err
	}
	if r.notes, err = notes.PurgeUnpublished(ctx, now.Add(-retention), batch, maxBatches); err != nil {
		return r, err
	}
	r.sessions, err = accounts.PurgeSessions(ctx, now, batch)
	return r, err
}

// deletedAny reports whether the reap deleted something.
func (r reaped) deletedAny() bool {
	return r.images.Images > 0 || r.notes.Notes > 0 || r.notes.Versions > 0 || r.sessions > 0
}

func (r reaped) log(ctx context.Context, log *slog.Logger, err error) {
	attrs := []any{"images", r.images.Images, "bytes", r.images.Bytes, "batches", r.images.Batches,
		"notes", r.notes.Notes, "versions", r.notes.Versions, "note_batches", r.notes.Batches, "sessions", r.sessions}
	if err != nil {
		log.ErrorContext(ctx, "reap failed", append(attrs, "err", err)...)
		return
	}
	log.InfoContext(ctx, "reaped", attrs...)
}

// reapJob is the in-process reaper of a serving process that SHARE_REAP_INTERVAL asks for
// (the embedded default's stand-in for the CronJob), whatever targets it serves, exporting
// what it deletes.
func reapJob(d Deps, noteStore *notedb.Store, accountStore *accountdb.Store) Job {
	images := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "sharenote_reaper_images_deleted_total", Help: "Images of unpublished notes deleted by the reaper."})
	bytes := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "sharenote_reaper_bytes_deleted_total", Help: "Image bytes deleted by the reaper."})
	notes := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "sharenote_reaper_notes_purged_total", Help: "Notes unpublished longer than the retention whose text the reaper deleted."})
	versions := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "sharenote_reaper_versions_purged_total", Help: "Version snapshots of those notes deleted by the reaper."})
	d.Registry.MustRegister(images, bytes, notes, versions)
	return Job{Name: "reap", Every: d.Config.ReapInterval, Run: func(ctx context.Context) error {
		r, err := reap(ctx, noteStore, accountStore, d.Now(), d.Config.UnpublishedRetention, 100, 0)
		images.Add(float64(r.images.Images))
		bytes.Add(float64(r.images.Bytes))
		notes.Add(float64(r.notes.Notes))
		versions.Add(float64(r.notes.Versions))
		if err != nil || r.deletedAny() {
			r.log(ctx, d.Log, err)
		}
		return nil
	}}
}
