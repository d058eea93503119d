package web

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pkuinfo/harness/host/api"
)

// TestDashboardEventsManyPages: every tab of the app opens its own stream; as many as one
// client may hold (api.MaxClientStreams) following the same card must not run the card's data
// source that many times an interval (a page cannot choose the host's refresh rate by opening
// more streams).
func TestDashboardEventsManyPages(t *testing.T) {
	h, ts := dashboardHost(t)
	a := addCard(t, h, `{"widget":"shuttle.next","size":"md"}`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const pages = api.MaxClientStreams
	var mu sync.Mutex
	events := 0
	var wg sync.WaitGroup
	for range pages {
		req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/v1/ui/dashboard/events", strings.NewReader(fmt.Sprintf(`{"cards":[%q]}`, a)))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 {
			t.Fatalf("stream: %d", resp.StatusCode)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				if sc.Text() == "event: refresh" {
					mu.Lock()
					events++
					mu.Unlock()
				}
			}
		}()
	}
	// Until every page has had a few refresh events (the interval is 60 ms here).
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		n := events
		mu.Unlock()
		if n >= pages*5 {
			break
		}
	}
	cancel()
	wg.Wait()
	audit, err := h.Audit(context.Background(), "shuttle", 1000)
	if err != nil {
		t.Fatal(err)
	}
	runs := 0
	for _, e := range audit {
		if e.Tool == "next" {
			runs++
		}
	}
	rounds := events / pages
	if runs > 2*rounds+2 {
		t.Errorf("%d pages, %d refresh events each: the source ran %d times", pages, rounds, runs)
	}
	t.Logf("%d pages, %d events, %d runs", pages, events, runs)
}
