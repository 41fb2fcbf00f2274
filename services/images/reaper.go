package images

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"gorm.io/gorm"

	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/config"
	"github.com/sharenote/sharenote/libs/logging"
	"github.com/sharenote/sharenote/libs/notedb"
)

// ReapCommand deletes the bytes of images of unpublished notes: the reaper CronJob's
// one-shot run (`reaper`, `sharenote reap`). It prints {"images","bytes","batches"}.
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
		r, err := notedb.New(gdb).Reap(ctx, *batch, *maxBatches)
		logReaped(ctx, log, r, err)
		if err != nil {
			return err
		}
		return json.NewEncoder(env.Stdout).Encode(map[string]any{"images": r.Images, "bytes": r.Bytes, "batches": r.Batches})
	})
}

func logReaped(ctx context.Context, log *slog.Logger, r notedb.Reaped, err error) {
	if err != nil {
		log.ErrorContext(ctx, "reap failed", "images", r.Images, "bytes", r.Bytes, "batches", r.Batches, "err", err)
		return
	}
	log.InfoContext(ctx, "reaped", "images", r.Images, "bytes", r.Bytes, "batches", r.Batches)
}

// reapJob is the in-process reaper of a serving process (the embedded default's stand-in
// for the CronJob), exporting what it deletes.
func reapJob(d app.Deps) app.Job {
	images := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "sharenote_reaper_images_deleted_total", Help: "Images of unpublished notes deleted by the reaper."})
	bytes := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "sharenote_reaper_bytes_deleted_total", Help: "Image bytes deleted by the reaper."})
	d.Registry.MustRegister(images, bytes)
	store := notedb.New(d.DB)
	return app.Job{Name: "reap", Every: d.Config.ReapInterval, Run: func(ctx context.Context) error {
		r, err := store.Reap(ctx, 100, 0)
		images.Add(float64(r.Images))
		bytes.Add(float64(r.Bytes))
		if err != nil || r.Images > 0 {
			logReaped(ctx, d.Log, r, err)
		}
		return nil
	}}
}
