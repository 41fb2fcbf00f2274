package app

import (
	"context"
	"encoding/json"
	"fmt"

	"go.opentelemetry.io/otel/trace/noop"

	"github.com/sharenote/sharenote/libs/blob/blobstore"
	"github.com/sharenote/sharenote/libs/cli"
	"github.com/sharenote/sharenote/libs/config"
	"github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/logging"
	"github.com/sharenote/sharenote/libs/notedb"
)

// copyBatch is how many images the copy of migrate looks at per query and reports
// progress after.
const copyBatch = 100

// runMigrate is `sharenote migrate`: it applies the pending schema migrations, then
// copies the image bytes that releases before the object store kept in the database into
// the store (notedb.CopyLegacyImages: idempotent and resumable), logging its progress, and
// prints {"status":"migrated","images_copied","images_skipped","bytes_copied"}.
func runMigrate(ctx context.Context, env cli.Env, args []string) error {
	if err := cli.NoArgs(args); err != nil {
		return err
	}
	cfg, err := config.Load(env.Getenv)
	if err != nil {
		return err
	}
	gdb, err := db.Open(ctx, cfg.DatabaseURL, noop.NewTracerProvider())
	if err != nil {
		return err
	}
	defer db.Close(gdb)
	if err := db.Migrate(ctx, gdb); err != nil {
		return err
	}
	blobs, err := blobstore.Open(ctx, cfg.BlobURL, env.Getenv)
	if err != nil {
		return fmt.Errorf("SHARE_BLOB_URL: %w", err)
	}
	log := logging.New(env.Stderr, cfg.LogLevel, "migrate")
	copied, err := notedb.New(gdb, blobs).CopyLegacyImages(ctx, copyBatch, func(c notedb.Copied) {
		log.InfoContext(ctx, "copying images into the object store", "copied", c.Objects, "skipped", c.Skipped, "bytes", c.Bytes)
	})
	if err != nil {
		return fmt.Errorf("copy images into the object store (%s): %w; run migrate again to resume", blobs, err)
	}
	return json.NewEncoder(env.Stdout).Encode(map[string]any{"status": "migrated",
		"images_copied": copied.Objects, "images_skipped": copied.Skipped, "bytes_copied": copied.Bytes})
}
