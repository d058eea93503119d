package server

import (
	"bufio"
	"context"
	"crypto/ecdh"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/pkuinfo/harness/cloud/protocol"
)

// TestMain lets the load test run the server in a child process (this test binary again), so
// the server's memory can be read from /proc without the clients in it.
func TestMain(m *testing.M) {
	if addr := os.Getenv("CLOUD_LOAD_SERVER"); addr != "" {
		os.Exit(runLoadServer(addr))
	}
	os.Exit(m.Run())
}

func runLoadServer(addr string) int {
	ctx := context.Background()
	st, err := OpenSQLite(ctx, ":memory:")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cfg := DefaultConfig(st)
	cfg.PowDifficulty = 0
	cfg.Registrations.Quota = 1 << 30
	cfg.TokensPerDevice.Quota = 1 << 30
	cfg.Limits.JoinsPerIPPerMin = 1 << 30
	cfg.Limits.Channels.FramesPerMin = 1 << 20
	srv, err := New(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go func() { // "mem" on stdin: GC, then print the heap and stack in use
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			switch cmd := in.Text(); {
			case strings.HasPrefix(cmd, "cpu "):
				if f, err := os.Create(cmd[4:]); err == nil {
					pprof.StartCPUProfile(f)
				}
				continue
			case cmd == "cpustop":
				pprof.StopCPUProfile()
				continue
			}
			var ms runtime.MemStats
			for range 4 { // stacks shrink by half per collection
				runtime.GC()
			}
			runtime.ReadMemStats(&ms)
			fmt.Printf("MEM %d %d %d\n", ms.HeapInuse, ms.StackInuse, runtime.NumGoroutine())
			if p := os.Getenv("CLOUD_LOAD_HEAPPROFILE"); p != "" {
				if f, err := os.Create(p); err == nil {
					pprof.WriteHeapProfile(f)
					f.Close()
				}
			}
		}
	}()
	err = srv.ListenAndServe(ctx, addr, func(a net.Addr) { fmt.Printf("LISTEN %s\n", a) })
	fmt.Fprintln(os.Stderr, err)
	return 1
}

// cpuTicks is the process's user + system CPU time in clock ticks (/proc/PID/stat).
func cpuTicks(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return u + k
}

func rssKB(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			n, _ := strconv.ParseInt(strings.Fields(l)[1], 10, 64)
			return n
		}
	}
	return 0
}

// TestLoad measures the relay: CLOUD_LOAD=PAIRS (owner + peer sockets each) against a server in
// a child process, reporting the server's resident memory per socket and the frames per second
// relayed owner → peer at CLOUD_LOAD_RATE frames/s for CLOUD_LOAD_SECONDS. Skipped unless
// CLOUD_LOAD is set: it is a measurement, not a unit test.
func TestLoad(t *testing.T) {
	pairs, _ := strconv.Atoi(os.Getenv("CLOUD_LOAD"))
	if pairs <= 0 {
		t.Skip("set CLOUD_LOAD=PAIRS to measure the relay")
	}
	rate, _ := strconv.Atoi(os.Getenv("CLOUD_LOAD_RATE"))
	if rate <= 0 {
		rate = 20000
	}
	secs, _ := strconv.Atoi(os.Getenv("CLOUD_LOAD_SECONDS"))
	if secs <= 0 {
		secs = 10
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CLOUD_LOAD_SERVER=127.0.0.1:0")
	cmd.Stderr = os.Stderr
	out, _ := cmd.StdoutPipe()
	stdin, _ := cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	sc := bufio.NewScanner(out)
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), "LISTEN ") {
		t.Fatalf("server did not start: %q", sc.Text())
	}
	base := "http://" + strings.TrimPrefix(sc.Text(), "LISTEN ")
	wsBase := "ws" + strings.TrimPrefix(base, "http")
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	post := func(path, tok string, body any, out any) {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", base+path, strings.NewReader(string(b)))
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		res, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("%s: %d", path, res.StatusCode)
		}
		json.NewDecoder(res.Body).Decode(out)
	}
	var meta protocol.MetaResponse
	res, err := hc.Get(base + "/v1/meta")
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(res.Body).Decode(&meta)
	res.Body.Close()
	time.Sleep(200 * time.Millisecond)
	rss0 := rssKB(cmd.Process.Pid)
	mem := func() (heap, stack, goroutines int64) {
		fmt.Fprintln(stdin, "mem")
		if !sc.Scan() {
			t.Fatal("server gone")
		}
		f := strings.Fields(sc.Text())
		heap, _ = strconv.ParseInt(f[1], 10, 64)
		stack, _ = strconv.ParseInt(f[2], 10, 64)
		goroutines, _ = strconv.ParseInt(f[3], 10, 64)
		return
	}
	h0, s0, g0 := mem()

	type pair struct {
		owner, peer *websocket.Conn
		peerID      string
	}
	ps := make([]pair, pairs)
	ctx := context.Background()
	var setupWG sync.WaitGroup
	sem := make(chan struct{}, 16)
	for d := 0; d*5 < pairs; d++ {
		setupWG.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; setupWG.Done() }()
			pub, priv, _ := ed25519.GenerateKey(rand.Reader)
			box, _ := ecdh.X25519().GenerateKey(rand.Reader)
			sp, bp := protocol.B64.EncodeToString(pub), protocol.B64.EncodeToString(box.PublicKey().Bytes())
			var reg protocol.RegisterDeviceResponse
			post("/v1/devices", "", protocol.RegisterDeviceRequest{SignPub: sp, BoxPub: bp, Pow: protocol.PowSolution{Salt: meta.Pow.Salt, Nonce: "0"}}, &reg)
			n := make([]byte, 16)
			rand.Read(n)
			ar := protocol.AuthTokenRequest{Aud: base, DeviceID: reg.DeviceID, Plugin: "bench", Services: []string{"channels"},
				Ts: time.Now().UnixMilli(), Nonce: protocol.B64.EncodeToString(n)}
			protocol.SignAuthChallenge(priv, &ar)
			var tok protocol.AuthTokenResponse
			post("/v1/auth/token", "", ar, &tok)
			for i := d * 5; i < min(pairs, d*5+5); i++ {
				k := make([]byte, 32)
				rand.Read(k)
				ak, ek := protocol.AuthKey(k), protocol.EncKey(k)
				meta, _ := protocol.Seal(ek[:], "m")
				var ch protocol.CreateChannelResponse
				post("/v1/channels", tok.Token, protocol.CreateChannelRequest{TtlS: 3600, JoinHash: protocol.JoinHash(ak[:]), Meta: &meta, ChanPub: bp}, &ch)
				var j protocol.JoinResponse
				post("/v1/c/"+ch.ID+"/join", "", protocol.JoinRequest{AuthKey: protocol.B64.EncodeToString(ak[:]), PeerPub: bp}, &j)
				oc, _, err := websocket.Dial(ctx, wsBase+"/v1/channels/"+ch.ID+"/ws?t="+tok.Token, nil)
				if err != nil {
					t.Error(err)
					return
				}
				pc, _, err := websocket.Dial(ctx, wsBase+"/v1/c/"+ch.ID+"/ws?t="+j.PeerToken, nil)
				if err != nil {
					t.Error(err)
					return
				}
				ps[i] = pair{owner: oc, peer: pc, peerID: j.PeerID}
			}
		}()
	}
	setupWG.Wait()
	if t.Failed() {
		return
	}
	time.Sleep(time.Second)
	rss1 := rssKB(cmd.Process.Pid)
	socks := 2 * pairs
	t.Logf("%d sockets: server RSS %d KB → %d KB, %.1f KB per socket", socks, rss0, rss1, float64(rss1-rss0)/float64(socks))
	h1, s1, g1 := mem()
	t.Logf("server heap+stack in use per socket %.1f KB (heap %.1f, stack %.1f), %.2f goroutines per socket",
		float64(h1+s1-h0-s0)/1024/float64(socks), float64(h1-h0)/1024/float64(socks), float64(s1-s0)/1024/float64(socks),
		float64(g1-g0)/float64(socks))

	// Relay: each owner sends rate/pairs frames per second to its peer; peers count arrivals.
	env, _ := protocol.SealBytes(make([]byte, 32), make([]byte, 64))
	var received atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, p := range ps {
		frame, _ := json.Marshal(protocol.OwnerOutFrame{T: "msg", To: p.peerID, Env: env})
		wg.Add(2)
		go func() { // peer reader
			defer wg.Done()
			for {
				_, b, err := p.peer.Read(ctx)
				if err != nil {
					return
				}
				if len(b) > 8 && string(b[:12]) == `{"t":"msg","` {
					received.Add(1)
				}
			}
		}()
		go func() { // owner writer
			defer wg.Done()
			ownerCtx, cancel := context.WithCancel(ctx)
			defer cancel()
			go func() { // drain the owner's frames (hello, presence) so control frames flow
				defer cancel()
				for {
					if _, _, err := p.owner.Read(ctx); err != nil {
						return
					}
				}
			}()
			interval := time.Duration(float64(time.Second) * float64(pairs) / float64(rate))
			tick := time.NewTicker(interval)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-ownerCtx.Done():
					return
				case <-tick.C:
					if p.owner.Write(ctx, websocket.MessageText, frame) != nil {
						return
					}
				}
			}
		}()
	}
	time.Sleep(2 * time.Second) // warm up
	if p := os.Getenv("CLOUD_LOAD_CPUPROFILE"); p != "" {
		fmt.Fprintln(stdin, "cpu "+p)
		defer func() {
			fmt.Fprintln(stdin, "cpustop")
			mem() // the answer means the profile is written
		}()
	}
	start, n0, c0 := time.Now(), received.Load(), cpuTicks(cmd.Process.Pid)
	time.Sleep(time.Duration(secs) * time.Second)
	el, n1, c1 := time.Since(start), received.Load(), cpuTicks(cmd.Process.Pid)
	frames := float64(n1 - n0)
	cpuUS := float64(c1-c0) * 1e6 / 100 // USER_HZ is 100 on Linux
	t.Logf("relayed %.0f frames/s (target %d/s) over %d pairs; server CPU %.1f µs per frame (%.0f frames/s per core)",
		frames/el.Seconds(), rate, pairs, cpuUS/frames, frames/(cpuUS/1e6))
	rss2 := rssKB(cmd.Process.Pid)
	t.Logf("server RSS under load %d KB (%.1f KB per socket)", rss2, float64(rss2-rss0)/float64(socks))
	close(stop)
	for _, p := range ps {
		p.owner.CloseNow()
		p.peer.CloseNow()
	}
	wg.Wait()
}
