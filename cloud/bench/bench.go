// Package bench is the load generator of the Cloud relay and store (`harness cloud bench`):
// owner/viewer pairs over real WebSockets, open loop at a target rate or closed loop with a
// window of frames in flight, every frame numbered and counted (in order, none lost), then
// store puts and gets. It measures a server in another process (Options.URL, ServerPID) or
// starts the reference server in this one (StartServers). The CLI parses flags and prints.
package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
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
	"github.com/pkuinfo/harness/cloud/server"
	"github.com/pkuinfo/harness/cloud/server/natsbus"
	"github.com/pkuinfo/harness/cloud/server/pgstore"
)

// Options say what Run does. Zero values are not defaults: the CLI fills them from its flags.
type Options struct {
	URL           string        // server base URL; "" starts servers in-process (StartServers)
	Pairs         int           // owner/viewer pairs (two WebSockets each)
	Rate          float64       // frames per second in total; 0 is closed loop
	Inflight      int           // closed loop: frames in flight per pair
	Duration      time.Duration // how long to relay frames at most
	Frames        int64         // when > 0, stop once this many frames were sent
	Payload       int           // plaintext bytes per frame
	StoreDuration time.Duration // store puts, then gets, this long each (0 skips)
	StoreWorkers  int           // concurrent store clients
	Setup         int           // concurrent channel opens and joins during setup
	ServerPID     int           // with URL: the server's process, for its resident memory
	DB            string        // in-process server: a postgres:// URL instead of a temporary SQLite file
	NATS          string        // in-process: two nodes on DB relaying through this NATS server
	Profile       io.Writer     // CPU profile of the relay phase, when set
}

// Report is what `cloud bench` measures. Connections counts WebSockets (an owner and a
// viewer per pair); with the in-process server MemPerConnKB covers both ends of each.
type Report struct {
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
	OutOfOrder      int64   `json:"outOfOrder"`
	FramesPerSec    float64 `json:"framesPerSec"`
	P50ms           float64 `json:"p50ms"`
	P99ms           float64 `json:"p99ms"`
	MaxMs           float64 `json:"maxMs"`
	StorePutsPerSec float64 `json:"storePutsPerSec"`
	StoreGetsPerSec float64 `json:"storeGetsPerSec"`
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

// ReadRSS reads a process's resident memory (VmRSS, in KB) from /proc.
func ReadRSS(pid int) (int64, error) {
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

	mu   sync.Mutex // one Send at a time per pair, so that sequence numbers are the wire order
	next int64      // the sequence number of the pair's next frame
	want int64      // the viewer's next expected sequence number (its goroutine only)
}

// Run sets up o.Pairs pairs, relays frames for o.Duration (or o.Frames), then runs the store
// phase, writing progress to log. The report holds what was measured even when a later phase
// fails (then err says which).
func Run(ctx context.Context, o Options, log io.Writer) (*Report, error) {
	raiseFileLimit()
	rep := &Report{Pairs: o.Pairs, Connections: 2 * o.Pairs, TargetRate: o.Rate}
	base, viewerBase := o.URL, o.URL
	if base == "" {
		urls, stop, err := StartServers(ctx, o.DB, o.NATS)
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
		if rss0, err = ReadRSS(o.ServerPID); err != nil {
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
		rss1, err := ReadRSS(o.ServerPID)
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
	if o.Profile != nil {
		if err := pprof.StartCPUProfile(o.Profile); err != nil {
			return nil, err
		}
	}
	relay(ctx, o, pairs, rep)
	if o.Profile != nil {
		pprof.StopCPUProfile()
	}

	if o.StoreDuration > 0 {
		fmt.Fprintf(log, "store: puts then gets for %v each…\n", o.StoreDuration)
		if err := runStore(ctx, o, plugins, rep); err != nil {
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
	S int64  `json:"s"`
	T int64  `json:"t"`
	P string `json:"p"`
}

func relay(ctx context.Context, o Options, pairs []*benchPair, rep *Report) {
	epoch := time.Now()
	pad := string(make([]byte, 0, o.Payload))
	for len(pad) < o.Payload-len(`{"s":1000000,"t":1000000000000,"p":""}`) {
		pad += "x"
	}
	var received, refused, disorder atomic.Int64
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
						if f.S != p.want { // a gap (a frame lost) or a frame out of order
							disorder.Add(1)
						}
						p.want = f.S + 1
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
	var budget atomic.Int64
	// take reports whether one more frame may go (Options.Frames).
	take := func() bool { return o.Frames <= 0 || budget.Add(1) <= o.Frames }
	send := func(p *benchPair) bool {
		sctx, scancel := context.WithTimeout(lctx, 5*time.Second)
		p.mu.Lock()
		err := p.owner.Send(sctx, p.peerID, benchFrame{S: p.next, T: int64(time.Since(epoch)), P: pad})
		if err == nil {
			p.next++
		}
		p.mu.Unlock()
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
					if !take() {
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
				if !take() {
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
	rep.OutOfOrder = disorder.Load()
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
func runStore(ctx context.Context, o Options, plugins []*client.Plugin, rep *Report) error {
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

// StartServers runs the reference server in-process on 127.0.0.1, over a temporary SQLite
// database or, with db, on PostgreSQL; with natsURL too, as two nodes sharing db and relaying
// through NATS (urls holds both). The limits a load test needs are lifted: no proof of work,
// registrations, joins and frames not rate-limited (the defaults allow 60 frames per minute per
// party). Channel, store and frame-size limits stay as in DEFAULT_LIMITS. stop shuts everything
// down and removes the temporary database.
func StartServers(ctx context.Context, db, natsURL string) (urls []string, stop func(), err error) {
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

// Merge adds up the reports of clients run in several processes against one server: counts and
// rates are summed, setup is the slowest, latency quantiles are the worst process's (an upper
// bound of the whole run's), memory per connection the mean. Nil for no report.
func Merge(reps []*Report) *Report {
	var out *Report
	n := 0
	for _, r := range reps {
		if r == nil {
			continue
		}
		n++
		if out == nil {
			c := *r
			out = &c
			continue
		}
		out.Pairs += r.Pairs
		out.Connections += r.Connections
		out.SetupSeconds = max(out.SetupSeconds, r.SetupSeconds)
		out.MemPerConnKB += r.MemPerConnKB
		out.GoroutinesPerCn += r.GoroutinesPerCn
		out.TargetRate += r.TargetRate
		out.Seconds = max(out.Seconds, r.Seconds)
		out.Sent += r.Sent
		out.Received += r.Received
		out.SendErrors += r.SendErrors
		out.Refused += r.Refused
		out.OutOfOrder += r.OutOfOrder
		out.FramesPerSec += r.FramesPerSec
		out.P50ms = max(out.P50ms, r.P50ms)
		out.P99ms = max(out.P99ms, r.P99ms)
		out.MaxMs = max(out.MaxMs, r.MaxMs)
		out.StorePutsPerSec += r.StorePutsPerSec
		out.StoreGetsPerSec += r.StoreGetsPerSec
	}
	if out != nil {
		out.MemPerConnKB /= float64(n)
		out.GoroutinesPerCn /= float64(n)
		out.Server += fmt.Sprintf(" (clients in %d processes)", n)
	}
	return out
}
