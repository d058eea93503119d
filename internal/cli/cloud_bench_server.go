package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/pkuinfo/harness/cloud/server"
)

// startBenchServer runs the reference server in-process on 127.0.0.1 over a temporary SQLite
// database, with the limits a load test needs lifted: no proof of work, registrations, joins
// and frames not rate-limited (the defaults allow 60 frames per minute per party). Channel,
// store and frame-size limits stay as in DEFAULT_LIMITS. stop shuts it down and removes the
// database.
func startBenchServer(ctx context.Context) (url string, stop func(), err error) {
	dir, err := os.MkdirTemp("", "harness-cloud-bench-")
	if err != nil {
		return "", nil, err
	}
	st, err := server.OpenSQLite(ctx, filepath.Join(dir, "cloud.db"))
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	cfg := server.DefaultConfig(st)
	cfg.PowDifficulty = 0
	cfg.Registrations = server.RatePolicy{Name: "register", Quota: 1 << 30, Window: time.Minute}
	cfg.TokensPerDevice = server.RatePolicy{Name: "token", Quota: 1 << 30, Window: time.Minute}
	cfg.Limits.Channels.FramesPerMin = 1 << 30
	cfg.Limits.JoinsPerIPPerMin = 1 << 30
	sctx, cancel := context.WithCancel(context.Background())
	srv, err := server.New(sctx, cfg)
	if err != nil {
		cancel()
		st.Close()
		os.RemoveAll(dir)
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		srv.Close()
		st.Close()
		os.RemoveAll(dir)
		return "", nil, err
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx, ln) }()
	stop = func() {
		cancel()
		srv.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
		}
		st.Close()
		os.RemoveAll(dir)
	}
	return fmt.Sprintf("http://%s", ln.Addr()), stop, nil
}
