package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pkuinfo/harness/agent/builtins"
	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/api"
	"github.com/pkuinfo/harness/host/builtin"
	"github.com/pkuinfo/harness/host/store"
)

// loadHost is dashboardHost with the API's options given, and its Server.
func loadHost(t testing.TB, opts api.Options) (*host.Host, *api.Server, *httptest.Server) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	h, err := host.New(db, builtin.Option(builtins.All()...))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.InstallOfficial(ctx); err != nil {
		t.Fatal(err)
	}
	srv := api.New(h, opts)
	routes(srv, h, &Dashboard{Host: h, Unit: time.Millisecond})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return h, srv, ts
}

// dbFiles counts this process's open descriptors on path and its -wal and -shm files.
func dbFiles(t testing.TB, path string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	n := 0
	for _, e := range ents {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && strings.HasPrefix(target, path) {
			n++
		}
	}
	return n
}

func heapMB() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapInuse) / (1 << 20)
}

// post sends a JSON POST as the client that sends origin ("" for none).
func post(ctx context.Context, ts *httptest.Server, path, origin, body string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", ts.URL+path, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	return ts.Client().Do(req)
}

// TestLoadStreamsAndCalls is a burst as an attacker would send it: hundreds of dashboard
// streams at once from one client that never reads them, more from the web app's origin, and
// hundreds of tool calls beside them. The caps hold (exactly the per-client and total numbers
// of streams open, the rest 429), every call answered 200 has its audit entry with its outcome
// (none left running, none lost), no call fails on the database, and once the clients
// disconnect mid-stream the host goes back to idle: no stream open, goroutines and heap near
// where they started, and few descriptors on harness.db.
func TestLoadStreamsAndCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("a burst of some seconds")
	}
	const (
		maxStreams = 24
		perClient  = 16
		streams    = 400 // from the script
		pageTries  = 40  // from the web app's origin
		calls      = 600
	)
	h, srv, ts := loadHost(t, api.Options{MaxStreams: maxStreams, MaxClientStreams: perClient})
	card := addCard(t, h, `{"widget":"shuttle.next","size":"md"}`)
	own := "http://" + strings.TrimPrefix(ts.URL, "http://")
	dbPath := h.Store().Path()
	ctx := context.Background()
	count := func(outcome string) int {
		var n int
		if err := h.Store().SQL.QueryRowContext(ctx, `SELECT COUNT(*) FROM audit WHERE plugin = 'dashboard' AND tool = 'list' AND outcome = ?`, outcome).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := count("ok")
	ts.Client().Transport.(*http.Transport).CloseIdleConnections()
	baseG, baseHeap, baseFiles := runtime.NumGoroutine(), heapMB(), dbFiles(t, dbPath)

	streamCtx, disconnect := context.WithCancel(ctx)
	defer disconnect()
	var (
		mu     sync.Mutex
		status = map[string]map[int]int{} // client → status → count
		open   []*http.Response
		failed []string
		wg     sync.WaitGroup
	)
	note := func(who string, code int) {
		mu.Lock()
		defer mu.Unlock()
		if status[who] == nil {
			status[who] = map[int]int{}
		}
		status[who][code]++
	}
	body := fmt.Sprintf(`{"cards":[%q]}`, card)
	stream := func(who, origin string) {
		resp, err := post(streamCtx, ts, "/v1/ui/dashboard/events", origin, body)
		if err != nil {
			mu.Lock()
			failed = append(failed, fmt.Sprintf("stream: %v", err))
			mu.Unlock()
			return
		}
		note(who, resp.StatusCode)
		if resp.StatusCode == http.StatusOK {
			mu.Lock()
			open = append(open, resp) // never read: the client just holds it
			mu.Unlock()
			return
		}
		var e struct{ Error struct{ Code string } }
		json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests || e.Error.Code != "too_many_streams" || resp.Header.Get("Retry-After") == "" {
			mu.Lock()
			failed = append(failed, fmt.Sprintf("stream: %d %q", resp.StatusCode, e.Error.Code))
			mu.Unlock()
		}
	}
	start := time.Now()
	for range streams {
		wg.Go(func() { stream("script", "") })
	}
	for range calls {
		wg.Go(func() {
			resp, err := post(ctx, ts, "/v1/tools/dashboard__list/call", "", `{"actor":"user"}`)
			if err != nil {
				mu.Lock()
				failed = append(failed, fmt.Sprintf("call: %v", err))
				mu.Unlock()
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			note("calls", resp.StatusCode)
			if resp.StatusCode != http.StatusOK {
				mu.Lock()
				failed = append(failed, fmt.Sprintf("call: %d %s", resp.StatusCode, b))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	// The web app's page opens its streams while the script holds its own: it gets the rest
	// of the total.
	for range pageTries {
		wg.Go(func() { stream("page", own) })
	}
	wg.Wait()
	burst := time.Since(start)
	peakHeap, peakG, peakFiles := heapMB(), runtime.NumGoroutine(), dbFiles(t, dbPath)
	for _, f := range failed[:min(len(failed), 10)] {
		t.Error(f)
	}
	if len(failed) > 10 {
		t.Errorf("… %d failures in all", len(failed))
	}
	if got := status["script"][http.StatusOK]; got != perClient {
		t.Errorf("the script opened %d streams; want %d (the per-client cap)", got, perClient)
	}
	if got := status["page"][http.StatusOK]; got != maxStreams-perClient {
		t.Errorf("the page opened %d streams; want %d (the rest of the total)", got, maxStreams-perClient)
	}
	if st := srv.StreamStats(); st.Open != maxStreams {
		t.Errorf("stream stats %+v; want %d open", st, maxStreams)
	}
	// Every call that ran has its entry: one per call answered 200 and one per stream opened
	// (it read the board through Host.Call); none is left running.
	okCalls := status["calls"][http.StatusOK]
	if got, want := count("ok")-before, okCalls+len(open); got != want {
		t.Errorf("audit: %d ok entries for %d calls and %d streams; want %d", got, okCalls, len(open), want)
	}
	if n := count("running"); n != 0 {
		t.Errorf("audit: %d entries left running", n)
	}
	if peakFiles > 3*store.MaxConns+1 {
		t.Errorf("%d descriptors on harness.db during the burst; want at most %d", peakFiles, 3*store.MaxConns+1)
	}

	// The clients go away mid-stream.
	disconnect()
	for _, r := range open {
		r.Body.Close()
	}
	ts.Client().Transport.(*http.Transport).CloseIdleConnections()
	var g int
	var heap float64
	var files int
	deadline := time.Now().Add(15 * time.Second)
	for {
		g, heap, files = runtime.NumGoroutine(), heapMB(), dbFiles(t, dbPath)
		idle := srv.StreamStats().Open == 0 && g <= baseG+10 && heap <= baseHeap+16 && files <= store.MaxConns+store.MaxIdleConns+1
		if idle || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("burst of %d streams and %d calls in %v; goroutines %d → %d → %d; heap %.1f → %.1f → %.1f MB; harness.db descriptors %d → %d → %d",
		streams+pageTries, calls, burst.Round(time.Millisecond), baseG, peakG, g, baseHeap, peakHeap, heap, baseFiles, peakFiles, files)
	if st := srv.StreamStats(); st.Open != 0 || st.Clients != 0 {
		t.Errorf("after the clients left: %+v; want no stream open", st)
	}
	if g > baseG+10 {
		t.Errorf("goroutines: %d after the burst; %d before", g, baseG)
	}
	if heap > baseHeap+16 {
		t.Errorf("heap: %.1f MB after the burst; %.1f MB before", heap, baseHeap)
	}
	if want := store.MaxConns + store.MaxIdleConns + 1; files > want {
		t.Errorf("%d descriptors on harness.db after the burst; want at most %d", files, want)
	}
}
