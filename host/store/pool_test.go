package store

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// dbFiles counts this process's open descriptors on path and its -wal and
// -shm files (Linux: /proc/self/fd).
func dbFiles(t *testing.T, path string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	n := 0
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err == nil && strings.HasPrefix(target, path) {
			n++
		}
	}
	return n
}

// TestPoolBounded: a burst of concurrent readers and writers, far more than
// MaxConns, never holds more than MaxConns connections' descriptors on the
// database, every write lands, and once idle the pool keeps at most
// MaxIdleConns connections.
func TestPoolBounded(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts descriptors in /proc/self/fd")
	}
	db := open(t, t.TempDir())
	ctx := context.Background()
	if _, err := db.SQL.ExecContext(ctx, `CREATE TABLE burst (n INTEGER)`); err != nil {
		t.Fatal(err)
	}
	const workers = 200
	var (
		peak atomic.Int64
		wg   sync.WaitGroup
		stop = make(chan struct{})
	)
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if n := int64(dbFiles(t, db.Path())); n > peak.Load() {
				peak.Store(n)
			}
			time.Sleep(time.Millisecond)
		}
	}()
	errs := make(chan error, workers)
	for i := range workers {
		wg.Go(func() {
			// A slow read holds its connection a while, so the pool is asked for many at once.
			var x int
			if err := db.SQL.QueryRowContext(ctx, `WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 20000)
				SELECT COUNT(*) FROM c`).Scan(&x); err != nil {
				errs <- err
				return
			}
			if _, err := db.SQL.ExecContext(ctx, `INSERT INTO burst (n) VALUES (?)`, i); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(stop)
	close(errs)
	for err := range errs {
		t.Errorf("burst: %v", err)
	}
	var rows int
	if err := db.SQL.QueryRowContext(ctx, `SELECT COUNT(*) FROM burst`).Scan(&rows); err != nil || rows != workers {
		t.Errorf("burst rows = %d, %v; want %d", rows, err, workers)
	}
	// Three descriptors a connection (database, -wal, -shm), and one spare for a file
	// SQLite opens for a moment.
	if p := peak.Load(); p > 3*MaxConns+1 {
		t.Errorf("peak descriptors on %s: %d; want at most %d (%d connections)", FileName, p, 3*MaxConns+1, MaxConns)
	}
	if st := db.SQL.Stats(); st.OpenConnections > MaxIdleConns {
		t.Errorf("idle pool holds %d connections; want at most %d", st.OpenConnections, MaxIdleConns)
	}
	// SQLite keeps the descriptor of a closed connection open while another connection of
	// the process holds a lock on the file, and reuses it for the next one: so the idle
	// bound is one database descriptor per connection the pool ever held at once, plus the
	// -wal of each idle one and the shared -shm.
	idle := dbFiles(t, db.Path())
	if want := MaxConns + MaxIdleConns + 1; idle > want {
		t.Errorf("idle: %d descriptors on %s; want at most %d", idle, FileName, want)
	}
	t.Logf("peak %d descriptors; idle %d", peak.Load(), idle)
	// Once the idle connections time out (ConnIdle; shortened here), every descriptor is
	// given back.
	db.SQL.SetConnMaxIdleTime(20 * time.Millisecond)
	deadline := time.Now().Add(10 * time.Second)
	for dbFiles(t, db.Path()) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := dbFiles(t, db.Path()); n > 0 {
		t.Errorf("after the idle timeout: %d descriptors on %s; want 0", n, FileName)
	}
}
