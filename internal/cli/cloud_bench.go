package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pkuinfo/harness/cloud/bench"
)

func init() {
	Register(&Command{
		Path:    "cloud bench",
		Usage:   "[--url URL [--server-pid PID] [--procs N] | --db postgres://… [--nats nats://…]] [--pairs N] [--rate FRAMES/S] [--duration D] [--store D] [--json]",
		Summary: "load-test a Cloud server on loopback: relay throughput and latency, memory per connection, store ops/s",
		Run:     runCloudBench,
		Flags: func(fs *flag.FlagSet) {
			var o benchOptions
			benchFlags(fs, &o)
		},
	})
}

// Bench bounds: the tool always stops by itself.
const (
	benchMaxPairs    = 10_000
	benchMaxDuration = 5 * time.Minute
	benchMaxRate     = 200_000
	benchMaxProcs    = 16
)

// benchOptions are the library's options plus what only the command has.
type benchOptions struct {
	bench.Options
	asJSON     bool
	procs      int
	cpuProfile string
}

// benchFlags defines the flags of `harness cloud bench` on fs, into o.
func benchFlags(fs *flag.FlagSet, o *benchOptions) {
	fs.StringVar(&o.URL, "url", "", "server base URL (default: start one in-process on 127.0.0.1 with a temporary SQLite database)")
	fs.IntVar(&o.Pairs, "pairs", 100, fmt.Sprintf("owner/viewer pairs, 1–%d (two WebSockets each)", benchMaxPairs))
	fs.Float64Var(&o.Rate, "rate", 1000, "frames per second in total, owners to viewers; 0 sends as fast as the relay delivers (closed loop, --inflight frames in flight per pair)")
	fs.IntVar(&o.Inflight, "inflight", 2, "with --rate 0: frames in flight per pair, 1–64")
	fs.DurationVar(&o.Duration, "duration", 10*time.Second, "how long to relay frames (at most 5m)")
	fs.Int64Var(&o.Frames, "frames", 0, "stop after this many frames (0: run for --duration)")
	fs.IntVar(&o.Payload, "payload", 64, "plaintext bytes per frame (8–3000)")
	fs.DurationVar(&o.StoreDuration, "store", 3*time.Second, "how long to run store puts, then gets (0 skips)")
	fs.IntVar(&o.StoreWorkers, "store-workers", 8, "concurrent store clients")
	fs.IntVar(&o.Setup, "setup", 32, "concurrent channel opens and joins during setup")
	fs.IntVar(&o.ServerPID, "server-pid", 0, "with --url: the server's process id, to report its resident memory per connection (Linux /proc)")
	fs.IntVar(&o.procs, "procs", 1, fmt.Sprintf("with --url: run the clients in this many processes (1–%d), pairs, rate and store workers split between them", benchMaxProcs))
	fs.BoolVar(&o.asJSON, "json", false, "print the report as JSON")
	fs.StringVar(&o.DB, "db", "", "in-process server on this postgres:// database (its tables are shared; use a scratch database)")
	fs.StringVar(&o.NATS, "nats", "", "with --db: two in-process nodes relaying through this NATS server, owners on one and viewers on the other")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the relay phase to this file (go tool pprof)")
}

func runCloudBench(env *Env) int {
	fs := flag.NewFlagSet("cloud bench", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	var o benchOptions
	benchFlags(fs, &o)
	if err := fs.Parse(env.Args); err != nil {
		return ExitUsage
	}
	if err := o.check(); err != nil || fs.NArg() > 0 {
		if err == nil {
			err = fmt.Errorf("unexpected argument %q", fs.Arg(0))
		}
		fmt.Fprintln(env.Stderr, "harness cloud bench:", err)
		return ExitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			fmt.Fprintln(env.Stderr, "harness cloud bench:", err)
			return ExitFail
		}
		defer f.Close()
		o.Profile = f
	}
	var rep *bench.Report
	var err error
	if o.procs > 1 {
		rep, err = runBenchProcs(ctx, o, env.Args, env.Stderr)
	} else {
		rep, err = bench.Run(ctx, o.Options, env.Stderr)
	}
	if rep != nil { // a failure in a later phase keeps the figures measured before it
		if o.asJSON {
			b, _ := json.MarshalIndent(rep, "", "  ")
			fmt.Fprintln(env.Stdout, string(b))
		} else {
			printBenchReport(env.Stdout, rep)
		}
	}
	if err != nil {
		fmt.Fprintln(env.Stderr, "harness cloud bench:", err)
		return ExitFail
	}
	return ExitOK
}

func (o *benchOptions) check() error {
	switch {
	case o.Pairs < 1 || o.Pairs > benchMaxPairs:
		return fmt.Errorf("--pairs %d: want 1–%d", o.Pairs, benchMaxPairs)
	case o.Rate < 0 || o.Rate > benchMaxRate || math.IsNaN(o.Rate):
		return fmt.Errorf("--rate %v: want 0 (closed loop) to %d", o.Rate, benchMaxRate)
	case o.Inflight < 1 || o.Inflight > 64:
		return fmt.Errorf("--inflight %d: want 1–64", o.Inflight)
	case o.Duration <= 0 || o.Duration > benchMaxDuration:
		return fmt.Errorf("--duration %v: want more than 0 and at most %v", o.Duration, benchMaxDuration)
	case o.Frames < 0:
		return fmt.Errorf("--frames %d: want 0 or more", o.Frames)
	case o.StoreDuration < 0 || o.StoreDuration > benchMaxDuration:
		return fmt.Errorf("--store %v: want 0–%v", o.StoreDuration, benchMaxDuration)
	case o.Payload < 8 || o.Payload > 3000:
		return fmt.Errorf("--payload %d: want 8–3000", o.Payload)
	case o.StoreWorkers < 1 || o.StoreWorkers > 64:
		return fmt.Errorf("--store-workers %d: want 1–64", o.StoreWorkers)
	case o.Setup < 1 || o.Setup > 256:
		return fmt.Errorf("--setup %d: want 1–256", o.Setup)
	case o.URL != "" && o.DB != "":
		return fmt.Errorf("--db starts an in-process server; it does not go with --url")
	case o.NATS != "" && !isPostgresURL(o.DB):
		return fmt.Errorf("--nats needs --db postgres://… (the nodes share it)")
	case o.DB != "" && !isPostgresURL(o.DB):
		return fmt.Errorf("--db %q: want a postgres:// URL (the default is a temporary SQLite file)", o.DB)
	case o.ServerPID != 0 && (o.URL == "" || o.ServerPID < 0):
		return fmt.Errorf("--server-pid needs --url (the in-process server is measured with the clients)")
	case o.procs < 1 || o.procs > benchMaxProcs:
		return fmt.Errorf("--procs %d: want 1–%d", o.procs, benchMaxProcs)
	case o.procs > 1 && (o.URL == "" || o.Pairs < o.procs):
		return fmt.Errorf("--procs %d needs --url and at least as many --pairs (each process runs its share of the pairs)", o.procs)
	case o.procs > 1 && o.cpuProfile != "":
		return fmt.Errorf("--cpuprofile profiles this process; it does not go with --procs")
	}
	return nil
}

// runBenchProcs runs the clients in o.procs child processes of this binary (each with its share
// of the pairs, rate, frames and store workers, --json, no --server-pid) and merges their
// reports. The server's memory is sampled here, every 100 ms, and reported as its peak growth.
func runBenchProcs(ctx context.Context, o benchOptions, args []string, log io.Writer) (*bench.Report, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var rss0 int64
	if o.ServerPID > 0 {
		if rss0, err = bench.ReadRSS(o.ServerPID); err != nil {
			return nil, err
		}
	}
	peak := rss0
	stopSample := make(chan struct{})
	var sampled sync.WaitGroup
	if o.ServerPID > 0 {
		sampled.Add(1)
		go func() {
			defer sampled.Done()
			t := time.NewTicker(100 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-t.C:
					if kb, err := bench.ReadRSS(o.ServerPID); err == nil {
						peak = max(peak, kb)
					}
				case <-stopSample:
					return
				}
			}
		}()
	}
	reps := make([]*bench.Report, o.procs)
	errs := make([]error, o.procs)
	var wg sync.WaitGroup
	for i := range o.procs {
		share := func(n int) int { return n/o.procs + btoi(i < n%o.procs) }
		child := append(withoutFlags(args, "procs", "server-pid", "json", "pairs", "rate", "frames", "store-workers"),
			"--json", "--pairs", fmt.Sprint(share(o.Pairs)), "--rate", fmt.Sprint(o.Rate/float64(o.procs)),
			"--frames", fmt.Sprint(int64(share(int(o.Frames)))), "--store-workers", fmt.Sprint(max(1, share(o.StoreWorkers))))
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out, errb bytes.Buffer
			cmd := exec.CommandContext(ctx, exe, append([]string{"cloud", "bench"}, child...)...)
			cmd.Stdout, cmd.Stderr = &out, &errb
			err := cmd.Run()
			var r bench.Report
			if jerr := json.Unmarshal(out.Bytes(), &r); jerr == nil {
				reps[i] = &r
			}
			if err != nil {
				errs[i] = fmt.Errorf("client process %d: %v\n%s", i+1, err, strings.TrimSpace(errb.String()))
			}
		}()
	}
	fmt.Fprintf(log, "running the clients in %d processes…\n", o.procs)
	wg.Wait()
	close(stopSample)
	sampled.Wait()
	rep := bench.Merge(reps)
	if rep != nil && o.ServerPID > 0 && rep.Connections > 0 {
		rep.ServerRSSPerCn = float64(peak-rss0) / float64(rep.Connections)
	}
	for _, err := range errs {
		if err != nil {
			return rep, err
		}
	}
	return rep, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// withoutFlags drops the named flags (with their values) from args.
func withoutFlags(args []string, names ...string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name := strings.TrimLeft(a, "-")
		name, _, hasValue := strings.Cut(name, "=")
		if !strings.HasPrefix(a, "-") || !contains(names, name) {
			out = append(out, a)
			continue
		}
		if !hasValue && name != "json" && i+1 < len(args) {
			i++ // the value
		}
	}
	return out
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func printBenchReport(w io.Writer, r *bench.Report) {
	fmt.Fprintf(w, "server          %s\n", r.Server)
	fmt.Fprintf(w, "connections     %d WebSockets (%d owner/viewer pairs), set up in %.1f s\n", r.Connections, r.Pairs, r.SetupSeconds)
	ends := "client ends only"
	if strings.Contains(r.Server, "in-process") {
		ends = "both ends: server and clients in this process"
	}
	fmt.Fprintf(w, "memory          %.1f KB per connection (heap + stacks after GC, %s), %.1f goroutines per connection\n", r.MemPerConnKB, ends, r.GoroutinesPerCn)
	if r.ServerRSSPerCn > 0 {
		fmt.Fprintf(w, "server memory   %.1f KB resident per connection (VmRSS growth of the server process)\n", r.ServerRSSPerCn)
	}
	target := fmt.Sprintf("target %.0f", r.TargetRate)
	if r.TargetRate == 0 {
		target = "closed loop"
	}
	fmt.Fprintf(w, "relay           %.0f frames/s received (%s): %d sent, %d received, %d send errors, %d refused by the relay in %.1f s\n", r.FramesPerSec, target, r.Sent, r.Received, r.SendErrors, r.Refused, r.Seconds)
	if r.OutOfOrder > 0 {
		fmt.Fprintf(w, "order           %d frames out of order or after a gap\n", r.OutOfOrder)
	}
	fmt.Fprintf(w, "latency         p50 %.2f ms, p99 %.2f ms, max %.2f ms (owner Send → viewer event, sealing and opening included)\n", r.P50ms, r.P99ms, r.MaxMs)
	if r.StorePutsPerSec > 0 || r.StoreGetsPerSec > 0 {
		fmt.Fprintf(w, "store           %.0f puts/s, %.0f gets/s\n", r.StorePutsPerSec, r.StoreGetsPerSec)
	}
}
