package testkit

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

func TestMain(m *testing.M) { Main(m) }

// The fallback is used only where no server answers on the standard ports, which is never
// the case on our machines; this test proves it works wherever the binaries exist.
func TestThrowAwayServersStartFromLocalBinaries(t *testing.T) {
	t.Run("postgres", func(t *testing.T) {
		if findBinary("initdb", "/usr/lib/postgresql/*/bin") == "" {
			t.Skip("no initdb binary on this machine")
		}
		u, err := startPostgres()
		if err != nil {
			t.Fatal(err)
		}
		gdb, err := gorm.Open(postgres.Open(u), &gorm.Config{Logger: logger.Discard})
		if err != nil {
			t.Fatal(err)
		}
		var one int
		if err := gdb.Raw("SELECT 1").Scan(&one).Error; err != nil || one != 1 {
			t.Fatalf("SELECT 1 = %d, %v", one, err)
		}
		sqlDB, _ := gdb.DB()
		_ = sqlDB.Close()
	})
	t.Run("redis", func(t *testing.T) {
		u, err := startRedis()
		if err != nil {
			t.Skip(err)
		}
		opts, _ := redis.ParseURL(u)
		rdb := redis.NewClient(opts)
		defer rdb.Close()
		if err := rdb.Ping(context.Background()).Err(); err != nil {
			t.Fatal(err)
		}
	})
}
