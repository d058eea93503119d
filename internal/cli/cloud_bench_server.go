package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/pkuinfo/harness/cloud/server"
	"github.com/pkuinfo/harness/cloud/server/natsbus"
	"github.com/pkuinfo/harness/cloud/server/pgstore"
)

// startBenchServers runs the reference server in-process on 127.0.0.1, over a temporary SQLite
// database or, with db, on PostgreSQL; with natsURL too, as two nodes sharing db and relaying
// through NATS (urls holds both). The limits a load test needs are lifted: no proof of work,
// registrations, joins and frames not rate-limited (the defaults allow 60 frames per minute per
// party). Channel, store and frame-size limits stay as in DEFAULT_LIMITS. stop shuts everything
// down and removes the temporary database.
func startBenchServers(ctx context.Context, db, natsURL string) (urls []string, stop func(), err error) {
	var stops []func()
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	fail := func(err error) ([]string, func(), error) {
		stop()
		return nil, nil, err
	}
	nodes := 1
	if natsURL != "" {
		nodes = 2
	}
	for n := range nodes {
		var st server.Storage
		if db != "" {
			pg, err := pgstore.Open(ctx, db)
			if err != nil {
				return fail(err)
			}
			st = pg
		} else {
			dir, err := os.MkdirTemp("", "harness-cloud-bench-")
			if err != nil {
				return fail(err)
			}
			stops = append(stops, func() { os.RemoveAll(dir) })
			sq, err := server.OpenSQLite(ctx, filepath.Join(dir, "cloud.db"))
			if err != nil {
				return fail(err)
			}
			st = sq
		}
		stops = append(stops, func() { st.Close() })
		cfg := server.DefaultConfig(st)
		cfg.PowDifficulty = 0
		cfg.Registrations = server.RatePolicy{Name: "register", Quota: 1 << 30, Window: time.Minute}
		cfg.TokensPerDevice = server.RatePolicy{Name: "token", Quota: 1 << 30, Window: time.Minute}
		cfg.Limits.Channels.FramesPerMin = 1 << 30
		cfg.Limits.JoinsPerIPPerMin = 1 << 30
		if natsURL != "" {
			bus, err := natsbus.Connect(natsURL, fmt.Sprintf("harness-cloud-bench node-%d", n), nil)
			if err != nil {
				return fail(err)
			}
			stops = append(stops, func() { bus.Close() })
			cfg.Bus, cfg.Node = bus, fmt.Sprintf("bench-%d", n)
		}
		sctx, cancel := context.WithCancel(context.Background())
		srv, err := server.New(sctx, cfg)
		if err != nil {
			cancel()
			return fail(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			cancel()
			srv.Close()
			return fail(err)
		}
		done := make(chan error, 1)
		go func() { done <- srv.Serve(sctx, ln) }()
		stops = append(stops, func() {
			cancel()
			srv.Close()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
			}
		})
		urls = append(urls, fmt.Sprintf("http://%s", ln.Addr()))
	}
	return urls, stop, nil
}
