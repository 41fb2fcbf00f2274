package db

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// A Write builds one statement on the handle it is given, as tx.Create(&row) or
// tx.Exec(sql, args...) do, and returns the handle gorm returns.
type Write func(tx *gorm.DB) *gorm.DB

// Batch runs writes as one unit: all of them or none. On Postgres they travel in one
// round trip: gorm builds each statement without running it and pgx sends them together,
// which the server runs as one implicit transaction. A transaction of the same writes
// costs a round trip for each, and two more (BEGIN, COMMIT). On SQLite, in the process,
// they run in a transaction. Only writes whose success is all the caller needs to know
// belong in a batch: their results (rows affected, RETURNING) are not read.
//
// Given a transaction's handle, Batch runs writes in that transaction, one after another.
func Batch(ctx context.Context, gdb *gorm.DB, writes ...Write) error {
	if _, ok := gdb.Statement.ConnPool.(gorm.TxCommitter); ok {
		return Run(gdb.WithContext(ctx), writes...)
	}
	b, ok := gdb.Config.Plugins[batchPlugin].(*batcher)
	if !ok {
		return gdb.WithContext(ctx).Transaction(func(tx *gorm.DB) error { return Run(tx, writes...) })
	}
	var batch pgx.Batch
	statements := make([]string, len(writes))
	for i, w := range writes {
		stmt := w(b.build.WithContext(ctx)).Statement
		if stmt.Error != nil {
			return stmt.Error
		}
		statements[i] = stmt.SQL.String()
		batch.Queue(statements[i], stmt.Vars...)
	}
	ctx, span := b.tracer.Start(ctx, "gorm.Batch", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("db.system", "postgresql"), attribute.String("db.statement", strings.Join(statements, ";\n"))))
	defer span.End()
	err := b.send(ctx, &batch)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		if t, ok := gdb.Dialector.(gorm.ErrorTranslator); ok {
			err = t.Translate(err) // as TranslateError does for gorm's own statements
		}
	}
	return err
}

// Run runs writes one after another on tx, up to the first that fails.
func Run(tx *gorm.DB, writes ...Write) error {
	for _, w := range writes {
		if err := w(tx).Error; err != nil {
			return err
		}
	}
	return nil
}

// batchPlugin names the batcher among a *gorm.DB's plugins.
const batchPlugin = "sharenote:batch"

// batcher is what Batch needs of a Postgres database, kept as a gorm plugin of its
// handle: a second handle on the same pool that only builds statements (DryRun, and
// without the tracing plugin, which would record a span for each statement it does not
// run), and the tracer of the batches' spans.
type batcher struct {
	build  *gorm.DB
	tracer trace.Tracer
}

func (*batcher) Name() string              { return batchPlugin }
func (*batcher) Initialize(*gorm.DB) error { return nil }

// useBatches makes Batch send gdb's batches in one round trip; cfg is gdb's configuration.
func useBatches(gdb *gorm.DB, cfg *gorm.Config, tp trace.TracerProvider) error {
	pool, err := gdb.DB()
	if err != nil {
		return err
	}
	build, err := gorm.Open(postgres.New(postgres.Config{Conn: pool}), &gorm.Config{
		DryRun: true, Logger: logger.Discard, SkipDefaultTransaction: true, NowFunc: cfg.NowFunc, DisableAutomaticPing: true,
	})
	if err != nil {
		return fmt.Errorf("batches: %w", err)
	}
	return gdb.Use(&batcher{build: build, tracer: tp.Tracer("github.com/sharenote/sharenote/libs/db")})
}

// send sends batch on a connection of the pool and reads every statement's result.
func (b *batcher) send(ctx context.Context, batch *pgx.Batch) error {
	pool, err := b.build.DB() // the handle's own pool
	if err != nil {
		return err
	}
	conn, err := pool.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(driverConn any) error {
		results := driverConn.(*stdlib.Conn).Conn().SendBatch(ctx, batch)
		for range batch.Len() {
			if _, err := results.Exec(); err != nil {
				_ = results.Close()
				return err
			}
		}
		return results.Close()
	})
}
