package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pkuinfo/harness/cloud/client"
	"github.com/pkuinfo/harness/cloud/protocol"
)

func init() {
	Register(&Command{
		Path:    "cloud bench",
		Usage:   "[--url URL | --db postgres://… [--nats nats://…]] [--pairs N] [--rate FRAMES/S] [--duration D] [--store D] [--json]",
		Summary: "load-test a Cloud server on loopback: relay throughput and latency, memory per connection, store ops/s",
		Run:     runCloudBench,
		Flags: func(fs *flag.FlagSet) {
			var o benchOptions
			var asJSON bool
			benchFlags(fs, &o, &asJSON)
		},
	})
}

// Bench bounds: the tool always stops by itself.
const (
	benchMaxPairs    = 10_000
	benchMaxDuration = 5 * time.Minute
	benchMaxRate     = 200_000
)

type benchOptions struct {
	URL           string
	Pairs         int
	Rate          float64
	Duration      time.Duration
	Payload       int
	StoreDuration time.Duration
	StoreWorkers  int
	Setup         int
	ServerPID     int
	Inflight      int
	DB            string    // in-process server: a postgres:// URL instead of a temporary SQLite file
	NATS          string    // in-process: two nodes on DB relaying through this NATS server
	profile       io.Writer // CPU profile of the relay phase, when set
}

// benchReport is what `cloud bench` measures. Connections counts WebSockets (an owner and a
// viewer per pair); with the in-process server MemPerConnKB covers both ends of each.
type benchReport struct {
	Server          string  `json:"server"`
	Pairs           int     `json:"pairs"`
	Connections     int     `json:"connections"`
	SetupSeconds    float64 `json:"setupSeconds"`
	MemPerConnKB    float64 `json:"memPerConnKB"`
	GoroutinesPerCn float64 `json:"goroutinesPerConn"`
	ServerRSSPerCn  float64 `json:"serverRSSPerConnKB,omitempty"`
	TargetRate      float64 `json:"targetRate"`
	Seconds         float64 `json:"seconds"`
	Sent            int64   `json:"sent"`
	Received        int64   `json:"received"`
	SendErrors      int64   `json:"sendErrors"`
	Refused         int64   `json:"refused"`
	FramesPerSec    float64 `json:"framesPerSec"`
	P50ms           float64 `json:"p50ms"`
	P99ms           float64 `json:"p99ms"`
	MaxMs           float64 `json:"maxMs"`
	StorePutsPerSec float64 `json:"storePutsPerSec"`
	StoreGetsPerSec float64 `json:"storeGetsPerSec"`
}

// benchFlags defines the flags of `harness cloud bench` on fs, into o and asJSON; it returns
// the --cpuprofile file.
func benchFlags(fs *flag.FlagSet, o *benchOptions, asJSON *bool) *string {
	fs.StringVar(&o.URL, "url", "", "server base URL (default: start one in-process on 127.0.0.1 with a temporary SQLite database)")
	fs.IntVar(&o.Pairs, "pairs", 100, fmt.Sprintf("owner/viewer pairs, 1–%d (two WebSockets each)", benchMaxPairs))
	fs.Float64Var(&o.Rate, "rate", 1000, "frames per second in total, owners to viewers; 0 sends as fast as the relay delivers (closed loop, --inflight frames in flight per pair)")
	fs.IntVar(&o.Inflight, "inflight", 2, "with --rate 0: frames in flight per pair, 1–64")
	fs.DurationVar(&o.Duration, "duration", 10*time.Second, "how long to relay frames (at most 5m)")
	fs.IntVar(&o.Payload, "payload", 64, "plaintext bytes per frame (8–3000)")
	fs.DurationVar(&o.StoreDuration, "store", 3*time.Second, "how long to run store puts, then gets (0 skips)")
	fs.IntVar(&o.StoreWorkers, "store-workers", 8, "concurrent store clients")
	fs.IntVar(&o.Setup, "setup", 32, "concurrent channel opens and joins during setup")
	fs.IntVar(&o.ServerPID, "server-pid", 0, "with --url: the server's process id, to report its resident memory per connection (Linux /proc)")
	fs.BoolVar(asJSON, "json", false, "print the report as JSON")
	fs.StringVar(&o.DB, "db", "", "in-process server on this postgres:// database (its tables are shared; use a scratch database)")
	fs.StringVar(&o.NATS, "nats", "", "with --db: two in-process nodes relaying through this NATS server, owners on one and viewers on the other")
	return fs.String("cpuprofile", "", "write a CPU profile of the relay phase to this file (go tool pprof)")
}

// registrationHint explains a registration refused by the rate limit of a server given with
// --url: the bench registers one device per limits.channels.maxOpen pairs, and a default
// `harness cloud serve` allows 10 registrations per client IP per hour.
func registrationHint(err error, nDev, perDevice, pairs int) error {
	return fmt.Errorf("%w\nthe server refused to register more devices from this address: this run registers %d devices "+
		"(%d pairs, at most %d channels per device). Start the server with --registrations-per-hour %d or more "+
		"(harness cloud serve --registrations-per-hour N; it allows 10 per client IP per hour by default), "+
		"or run with fewer --pairs (the devices registered so far count for an hour)", err, nDev, pairs, perDevice, nDev)
}

func runCloudBench(env *Env) int {
	fs := flag.NewFlagSet("cloud bench", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	var o benchOptions
	var asJSON bool
	cpuProfile := benchFlags(fs, &o, &asJSON)
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
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintln(env.Stderr, "harness cloud bench:", err)
			return ExitFail
		}
		defer f.Close()
		o.profile = f
	}
	rep, err := runBench(ctx, o, env.Stderr)
	if rep != nil { // a failure in a later phase keeps the figures measured before it
		if asJSON {
			b, _ := json.MarshalIndent(rep, "", "  ")
			fmt.Fprintln(env.Stdout, string(b))
		} else {
			rep.print(env.Stdout)
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
	}
	return nil
}

func (r *benchReport) print(w io.Writer) {
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
	fmt.Fprintf(w, "latency         p50 %.2f ms, p99 %.2f ms, max %.2f ms (owner Send → viewer event, sealing and opening included)\n", r.P50ms, r.P99ms, r.MaxMs)
	if r.StorePutsPerSec > 0 || r.StoreGetsPerSec > 0 {
		fmt.Fprintf(w, "store           %.0f puts/s, %.0f gets/s\n", r.StorePutsPerSec, r.StoreGetsPerSec)
	}
}

// readRSS reads a process's resident memory (VmRSS, in KB) from /proc.
func readRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("--server-pid: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb); err != nil {
				return 0, fmt.Errorf("--server-pid: VmRSS %q: %w", rest, err)
			}
			return kb, nil
		}
	}
	return 0, fmt.Errorf("--server-pid: no VmRSS in /proc/%d/status", pid)
}

// raiseFileLimit lifts the soft open-file limit to the hard one: every WebSocket is a file
// descriptor, twice over when the server runs in-process.
func raiseFileLimit() {
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil && lim.Cur < lim.Max {
		lim.Cur = lim.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
}

type benchPair struct {
	owner  *client.Channel
	viewer *client.Viewer
	peerID string
}

func runBench(ctx context.Context, o benchOptions, log io.Writer) (*benchReport, error) {
	raiseFileLimit()
	rep := &benchReport{Pairs: o.Pairs, Connections: 2 * o.Pairs, TargetRate: o.Rate}
	base, viewerBase := o.URL, o.URL
	if base == "" {
		urls, stop, err := startBenchServers(ctx, o.DB, o.NATS)
		if err != nil {
			return nil, err
		}
		defer stop()
		base, viewerBase = urls[0], urls[len(urls)-1]
		switch {
		case o.NATS != "":
			rep.Server = urls[0] + " (owners) and " + urls[1] + " (viewers): two in-process nodes, PostgreSQL, NATS"
		case o.DB != "":
			rep.Server = base + " (in-process, PostgreSQL)"
		default:
			rep.Server = base + " (in-process, SQLite)"
		}
	} else {
		rep.Server = base
	}
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     30 * time.Second,
	}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}

	c0, err := client.New(client.Config{BaseURL: base, HTTPClient: hc})
	if err != nil {
		return nil, err
	}
	meta, err := c0.Meta(ctx)
	if err != nil {
		return nil, err
	}
	perDevice := int(meta.Limits.Channels.MaxOpen)
	if perDevice < 1 {
		perDevice = 1
	}
	if fpm := meta.Limits.Channels.FramesPerMin; o.URL != "" && (o.Rate == 0 || float64(fpm)/60*float64(o.Pairs) < o.Rate) {
		fmt.Fprintf(log, "warning: the server allows %d frames/min per party; %d pairs can carry at most %.0f frames/s\n", fpm, o.Pairs, float64(fpm)/60*float64(o.Pairs))
	}

	// Devices: enough that none holds more than limits.channels.maxOpen channels.
	nDev := (o.Pairs + perDevice - 1) / perDevice
	plugins := make([]*client.Plugin, nDev)
	fmt.Fprintf(log, "registering %d devices…\n", nDev)
	if err := parallel(ctx, nDev, o.Setup, func(i int) error {
		c, err := client.New(client.Config{BaseURL: base, HTTPClient: hc})
		if err != nil {
			return err
		}
		if plugins[i], err = c.Plugin("bench", "channels", "store"); err != nil {
			return err
		}
		_, err = plugins[i].Token(ctx)
		return err
	}); err != nil {
		if o.URL != "" && client.IsCode(err, protocol.CodeRateLimited) {
			return nil, registrationHint(err, nDev, perDevice, o.Pairs)
		}
		return nil, err
	}

	var rss0 int64
	if o.ServerPID > 0 {
		if rss0, err = readRSS(o.ServerPID); err != nil {
			return nil, err
		}
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	g0 := runtime.NumGoroutine()

	fmt.Fprintf(log, "opening %d channels and joining a viewer to each…\n", o.Pairs)
	start := time.Now()
	pairs := make([]*benchPair, o.Pairs)
	if err := parallel(ctx, o.Pairs, o.Setup, func(i int) error {
		p, err := openPair(ctx, plugins[i/perDevice], hc, base, viewerBase)
		pairs[i] = p
		return err
	}); err != nil {
		closePairs(pairs)
		return nil, err
	}
	rep.SetupSeconds = time.Since(start).Seconds()
	defer closePairs(pairs)

	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	used := float64(after.HeapAlloc+after.StackInuse) - float64(before.HeapAlloc+before.StackInuse)
	rep.MemPerConnKB = used / float64(rep.Connections) / 1024
	rep.GoroutinesPerCn = float64(runtime.NumGoroutine()-g0) / float64(rep.Connections)
	if o.ServerPID > 0 {
		rss1, err := readRSS(o.ServerPID)
		if err != nil {
			return nil, err
		}
		rep.ServerRSSPerCn = float64(rss1-rss0) / float64(rep.Connections)
	}

	if o.Rate > 0 {
		fmt.Fprintf(log, "relaying %.0f frames/s for %v…\n", o.Rate, o.Duration)
	} else {
		fmt.Fprintf(log, "relaying as fast as frames arrive, %d in flight per pair, for %v…\n", o.Inflight, o.Duration)
	}
	if o.profile != nil {
		if err := pprof.StartCPUProfile(o.profile); err != nil {
			return nil, err
		}
	}
	relay(ctx, o, pairs, rep)
	if o.profile != nil {
		pprof.StopCPUProfile()
	}

	if o.StoreDuration > 0 {
		fmt.Fprintf(log, "store: puts then gets for %v each…\n", o.StoreDuration)
		if err := benchStore(ctx, o, plugins, rep); err != nil {
			return rep, err
		}
	}
	return rep, ctx.Err()
}

// openPair opens one channel and joins one viewer, and returns once the owner knows the peer.
// With viewerBase not base (two nodes) the viewer joins through viewerBase, and the pair is ready
// once the owner's node has heard from the viewer's that the viewer is online.
func openPair(ctx context.Context, p *client.Plugin, hc *http.Client, base, viewerBase string) (*benchPair, error) {
	ch, err := p.OpenChannel(ctx, client.OpenOptions{TTL: time.Hour, Meta: map[string]string{"bench": "1"}, EventBuffer: 16})
	if err != nil {
		return nil, err
	}
	bp := &benchPair{owner: ch}
	link := ch.Link()
	if viewerBase != base {
		if link, err = client.ParseSecretLink(strings.Replace(link.Reveal(), base, viewerBase, 1)); err != nil {
			ch.Disconnect()
			return nil, err
		}
	}
	v, err := client.Join(ctx, link, client.ViewerOptions{HTTPClient: hc, EventBuffer: 16})
	if err != nil {
		ch.Disconnect()
		return nil, err
	}
	bp.viewer, bp.peerID = v, v.PeerID()
	for {
		select {
		case _, ok := <-ch.Events():
			if !ok {
				return bp, fmt.Errorf("channel %s ended during setup: %v", ch.ID(), ch.Err())
			}
			// The viewer is online once the owner heard so (a peer event, or a hello after a
			// reconnect): a join alone only says the seat is claimed, its socket may not be up.
			if slices.ContainsFunc(ch.Peers(), func(pi client.PeerInfo) bool { return pi.PeerID == bp.peerID && pi.Online }) {
				return bp, nil
			}
		case <-ctx.Done():
			return bp, ctx.Err()
		case <-time.After(30 * time.Second):
			return bp, fmt.Errorf("channel %s: the owner did not see the viewer join in 30 s", ch.ID())
		}
	}
}

func closePairs(pairs []*benchPair) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for _, p := range pairs {
		if p == nil {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if p.viewer != nil {
				p.viewer.Leave()
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = p.owner.Close(ctx)
		}()
	}
	wg.Wait()
}

// benchFrame is the plaintext of a bench frame: T is nanoseconds since the run's epoch, P
// pads the frame to --payload bytes.
type benchFrame struct {
	T int64  `json:"t"`
	P string `json:"p"`
}

func relay(ctx context.Context, o benchOptions, pairs []*benchPair, rep *benchReport) {
	epoch := time.Now()
	pad := string(make([]byte, 0, o.Payload))
	for len(pad) < o.Payload-len(`{"t":1000000000000,"p":""}`) {
		pad += "x"
	}
	var received, refused atomic.Int64
	lat := make([][]time.Duration, len(pairs))
	// Closed loop: a pair may send when it holds a credit; each frame received returns one.
	credits := make([]chan struct{}, len(pairs))
	if o.Rate == 0 {
		for i := range credits {
			credits[i] = make(chan struct{}, o.Inflight)
			for range o.Inflight {
				credits[i] <- struct{}{}
			}
		}
	}
	var rwg sync.WaitGroup
	stopRecv := make(chan struct{})
	for i, p := range pairs {
		rwg.Add(2)
		go func() { // drain the owner's events so its socket never blocks
			defer rwg.Done()
			for {
				select {
				case ev, ok := <-p.owner.Events():
					if !ok {
						return
					}
					if ev.Type == client.EventError && ev.Code != "" {
						// The relay refused a frame and said why (offline, too slow, rate).
						refused.Add(1)
						if credits[i] != nil {
							select {
							case credits[i] <- struct{}{}:
							default:
							}
						}
					}
				case <-stopRecv:
					return
				}
			}
		}()
		go func() {
			defer rwg.Done()
			for {
				select {
				case ev, ok := <-p.viewer.Events():
					if !ok {
						return
					}
					if ev.Type != client.EventMessage {
						continue
					}
					var f benchFrame
					if json.Unmarshal(ev.Msg, &f) == nil {
						lat[i] = append(lat[i], time.Since(epoch)-time.Duration(f.T))
						received.Add(1)
					}
					if credits[i] != nil {
						select {
						case credits[i] <- struct{}{}:
						default:
						}
					}
				case <-stopRecv:
					return
				}
			}
		}()
	}

	var sent, sendErr atomic.Int64
	lctx, cancel := context.WithTimeout(ctx, o.Duration)
	defer cancel()
	var swg sync.WaitGroup
	start := time.Now()
	send := func(p *benchPair) bool {
		sctx, scancel := context.WithTimeout(lctx, 5*time.Second)
		err := p.owner.Send(sctx, p.peerID, benchFrame{T: int64(time.Since(epoch)), P: pad})
		scancel()
		if err != nil {
			if lctx.Err() == nil {
				sendErr.Add(1)
			}
			return false
		}
		sent.Add(1)
		return true
	}
	if o.Rate == 0 {
		for i, p := range pairs {
			swg.Add(1)
			go func() {
				defer swg.Done()
				for {
					select {
					case <-credits[i]:
					case <-lctx.Done():
						return
					}
					if !send(p) {
						credits[i] <- struct{}{} // the frame never left: keep the credit
						if !sleep(lctx, 10*time.Millisecond) {
							return
						}
					}
				}
			}()
		}
	}
	// Open loop: W goroutines, each pacing its share of the rate over its share of the pairs.
	w := min(len(pairs), max(1, int(o.Rate/500)), 64)
	if o.Rate == 0 {
		w = 0
	}
	for s := range w {
		swg.Add(1)
		go func() {
			defer swg.Done()
			interval := time.Duration(float64(time.Second) * float64(w) / o.Rate)
			next := time.Now()
			for k := s; ; k += w {
				next = next.Add(interval)
				if d := time.Until(next); d > 0 {
					select {
					case <-time.After(d):
					case <-lctx.Done():
						return
					}
				} else if lctx.Err() != nil {
					return
				}
				send(pairs[k%len(pairs)])
			}
		}()
	}
	swg.Wait()
	elapsed := time.Since(start)
	// Let frames in flight arrive or be refused (at most 10 s).
	for deadline := time.Now().Add(10 * time.Second); received.Load()+refused.Load() < sent.Load() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	close(stopRecv)
	rwg.Wait()

	rep.Seconds = elapsed.Seconds()
	rep.Sent, rep.Received, rep.SendErrors, rep.Refused = sent.Load(), received.Load(), sendErr.Load(), refused.Load()
	rep.FramesPerSec = float64(rep.Received) / elapsed.Seconds()
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	slices.Sort(all)
	if n := len(all); n > 0 {
		q := func(p float64) float64 { return float64(all[min(n-1, int(p*float64(n)))]) / 1e6 }
		rep.P50ms, rep.P99ms, rep.MaxMs = q(0.50), q(0.99), float64(all[n-1])/1e6
	}
}

// benchStore runs puts for o.StoreDuration, then gets for as long, from o.StoreWorkers
// goroutines over the bench devices' stores (50 keys each, 100-byte values: inside the quotas).
func benchStore(ctx context.Context, o benchOptions, plugins []*client.Plugin, rep *benchReport) error {
	const keys = 50
	value := map[string]string{"v": string(make([]byte, 0))}
	for len(value["v"]) < 100 {
		value["v"] += "0123456789"
	}
	written := make([]int, o.StoreWorkers) // keys each worker has put, ≤ keys
	run := func(op func(st *client.Store, w, i int) error) (float64, error) {
		var n atomic.Int64
		var firstErr error
		var once sync.Once
		sctx, cancel := context.WithTimeout(ctx, o.StoreDuration)
		defer cancel()
		var wg sync.WaitGroup
		start := time.Now()
		for w := range o.StoreWorkers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st := plugins[w%len(plugins)].Store(false)
				for i := 0; sctx.Err() == nil; i++ {
					err := op(st, w, i)
					if err != nil {
						if sctx.Err() == nil {
							once.Do(func() { firstErr = err })
							cancel()
						}
						return
					}
					n.Add(1)
				}
			}()
		}
		wg.Wait()
		return float64(n.Load()) / time.Since(start).Seconds(), firstErr
	}
	var err error
	rep.StorePutsPerSec, err = run(func(st *client.Store, w, i int) error {
		_, err := st.Put(ctx, fmt.Sprintf("bench/w%d/k%d", w, i%keys), value, client.PutOptions{})
		if err == nil && i < keys {
			written[w] = i + 1
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("store put: %w", err)
	}
	rep.StoreGetsPerSec, err = run(func(st *client.Store, w, i int) error {
		if written[w] == 0 {
			return fmt.Errorf("store worker %d wrote nothing", w)
		}
		key := fmt.Sprintf("bench/w%d/k%d", w, i%written[w])
		it, err := st.Get(ctx, key)
		if err == nil && it == nil {
			err = errors.New(key + " is missing")
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("store get: %w", err)
	}
	return nil
}

// sleep waits d unless ctx ends first; it reports whether the full wait passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// parallel runs f(0) … f(n-1) on at most width goroutines and returns the first error.
func parallel(ctx context.Context, n, width int, f func(i int) error) error {
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	for range min(n, width) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := f(i); err != nil {
					once.Do(func() { firstErr = err })
					next.Store(int64(n))
					return
				}
			}
		}()
	}
	wg.Wait()
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	return firstErr
}
