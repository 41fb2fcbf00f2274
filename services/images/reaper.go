package images

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
	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/config"
	"github.com/sharenote/sharenote/libs/logging"
	"github.com/sharenote/sharenote/libs/notedb"
)

// ReapCommand deletes the bytes of images of unpublished notes, and expired sessions: the
// reaper CronJob's one-shot run (`reaper`, `sharenote reap`). It prints
// {"images","bytes","batches","sessions"}.
var ReapCommand = app.Command{
	Name:    "reap",
	Summary: "delete the bytes of images of unpublished notes",
	Run:     runReap,
}

// ReaperProgram is the reaper binary: one reap, then exit.
var ReaperProgram = app.Program{Name: "reaper", Commands: []app.Command{ReapCommand}, Default: "reap"}

func runReap(ctx context.Context, env app.Env, args []string) error {
	fs := flag.NewFlagSet("reap", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	batch := fs.Int("batch", 100, "images deleted per transaction")
	maxBatches := fs.Int("max-batches", 0, "stop after this many batches (0: until none is left)")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", app.ErrUsage, err)
	}
	if *batch < 1 || *maxBatches < 0 {
		return fmt.Errorf("%w: --batch must be ≥ 1 and --max-batches ≥ 0", app.ErrUsage)
	}
	cfg, err := config.Load(env.Getenv)
	if err != nil {
		return err
	}
	log := logging.New(env.Stderr, cfg.LogLevel, "reaper")
	return app.WithDB(ctx, env, func(gdb *gorm.DB) error {
		r, sessions, err := reap(ctx, gdb, time.Now(), *batch, *maxBatches)
		logReaped(ctx, log, r, sessions, err)
		if err != nil {
			return err
		}
		return json.NewEncoder(env.Stdout).Encode(map[string]any{"images": r.Images, "bytes": r.Bytes, "batches": r.Batches, "sessions": sessions})
	})
}

// reap deletes released images, then the sessions expired at now.
func reap(ctx context.Context, gdb *gorm.DB, now time.Time, batch, maxBatches int) (notedb.Reaped, int64, error) {
	r, err := notedb.New(gdb).Reap(ctx, batch, maxBatches)
	if err != nil {
		return r, 0, err
	}
	sessions, err := accountdb.New(gdb).PurgeSessions(ctx, now, batch)
	return r, sessions, err
}

func logReaped(ctx context.Context, log *slog.Logger, r notedb.Reaped, sessions int64, err error) {
	attrs := []any{"images", r.Images, "bytes", r.Bytes, "batches", r.Batches, "sessions", sessions}
	if err != nil {
		log.ErrorContext(ctx, "reap failed", append(attrs, "err", err)...)
		return
	}
	log.InfoContext(ctx, "reaped", attrs...)
}

// reapJob is the in-process reaper of a serving process (the embedded default's stand-in
// for the CronJob), exporting what it deletes.
func reapJob(d app.Deps) app.Job {
	images := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "sharenote_reaper_images_deleted_total", Help: "Images of unpublished notes deleted by the reaper."})
	bytes := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "sharenote_reaper_bytes_deleted_total", Help: "Image bytes deleted by the reaper."})
	d.Registry.MustRegister(images, bytes)
	return app.Job{Name: "reap", Every: d.Config.ReapInterval, Run: func(ctx context.Context) error {
		r, sessions, err := reap(ctx, d.DB, d.Now(), 100, 0)
		images.Add(float64(r.Images))
		bytes.Add(float64(r.Bytes))
		if err != nil || r.Images > 0 || sessions > 0 {
			logReaped(ctx, d.Log, r, sessions, err)
		}
		return nil
	}}
}
