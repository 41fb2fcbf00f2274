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
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/notedb"
)

// copyBatch is how many images the copy of migrate looks at per query and reports
// progress after.
const copyBatch = 100

// migrate is `sharenote migrate`: it applies the pending schema migrations, grants each
// role of SHARE_DATABASE_ROLES what its targets need (roleGrants), then copies the image
// bytes that releases before the object store kept in the database into the store
// (note.Reaper.CopyLegacyImages: idempotent and resumable), logging its progress, and prints
// {"status":"migrated","granted","images_copied","images_skipped","bytes_copied"}.
func (p Program) migrate(ctx context.Context, env cli.Env, args []string) error {
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
	granted, err := p.roleGrants(cfg.DatabaseRoles)
	if err != nil {
		return err
	}
	for role, access := range granted {
		if err := db.Grant(ctx, gdb, role, access == ReadWrite.String()); err != nil {
			return err
		}
	}
	blobs, err := blobstore.Open(ctx, cfg.BlobURL, env.Getenv)
	if err != nil {
		return fmt.Errorf("SHARE_BLOB_URL: %w", err)
	}
	log := logging.New(env.Stderr, cfg.LogLevel, "migrate")
	copied, err := note.NewReaper(notedb.New(gdb, newWriter(cfg, nil)), blobs).CopyLegacyImages(ctx, copyBatch, func(c note.Copied) {
		log.InfoContext(ctx, "copying images into the object store", "copied", c.Objects, "skipped", c.Skipped, "bytes", c.Bytes)
	})
	if err != nil {
		return fmt.Errorf("copy images into the object store (%s): %w; run migrate again to resume", blobs, err)
	}
	return json.NewEncoder(env.Stdout).Encode(map[string]any{"status": "migrated", "granted": granted,
		"images_copied": copied.Objects, "images_skipped": copied.Skipped, "bytes_copied": copied.Bytes})
}

// roleGrants maps each role of roles (by target) to the access its targets need
// ("read-only" or "read-write"), the most any of them needs.
func (p Program) roleGrants(roles map[string]string) (map[string]string, error) {
	access := map[string]Access{}
	for name, role := range roles {
		targets, err := p.targets([]string{name})
		if err != nil {
			return nil, err
		}
		access[role] = max(access[role], targets[0].Needs.Database)
	}
	out := make(map[string]string, len(access))
	for role, a := range access {
		if a == NoDatabase {
			continue
		}
		out[role] = a.String()
	}
	return out, nil
}
