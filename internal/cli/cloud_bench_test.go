package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/cloud/bench"
)

func TestCloudBenchUsage(t *testing.T) {
	tests := []struct {
		args []string
		err  string
	}{
		{[]string{"--pairs", "0"}, "--pairs 0: want 1–10000"},
		{[]string{"--pairs", "10001"}, "--pairs 10001: want 1–10000"},
		{[]string{"--rate", "-1"}, "--rate -1: want 0 (closed loop) to 200000"},
		{[]string{"--rate", "0", "--inflight", "0"}, "--inflight 0: want 1–64"},
		{[]string{"--duration", "6m"}, "--duration 6m0s: want more than 0 and at most 5m0s"},
		{[]string{"--payload", "4"}, "--payload 4: want 8–3000"},
		{[]string{"--store", "-1s"}, "--store -1s: want 0–5m0s"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"--server-pid", "5"}, "--server-pid needs --url (the in-process server is measured with the clients)"},
		{[]string{"--procs", "2"}, "--procs 2 needs --url and at least as many --pairs (each process runs its share of the pairs)"},
		{[]string{"--procs", "17"}, "--procs 17: want 1–16"},
		{[]string{"--frames", "-1"}, "--frames -1: want 0 or more"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Main(append([]string{"cloud", "bench"}, tc.args...), nil, &out, &errb)
			if code != ExitUsage {
				t.Errorf("exit %d, want %d", code, ExitUsage)
			}
			if got := strings.TrimSpace(errb.String()); got != "harness cloud bench: "+tc.err {
				t.Errorf("stderr = %q, want %q", got, "harness cloud bench: "+tc.err)
			}
		})
	}
}

// TestCloudBenchSmall runs the load tool at a tiny scale against its in-process server and
// checks that every figure it reports was measured.
func TestCloudBenchSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server and 8 WebSockets")
	}
	o := bench.Options{Pairs: 4, Rate: 40, Duration: time.Second, Payload: 64, StoreDuration: 300 * time.Millisecond, StoreWorkers: 2, Setup: 4, Inflight: 2}
	var log bytes.Buffer
	rep, err := bench.Run(context.Background(), o, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if rep.Connections != 8 || rep.Sent < 20 || rep.Received != rep.Sent || rep.SendErrors != 0 || rep.Refused != 0 {
		t.Errorf("connections %d, sent %d, received %d, errors %d, refused %d", rep.Connections, rep.Sent, rep.Received, rep.SendErrors, rep.Refused)
	}
	if rep.P50ms <= 0 || rep.P99ms < rep.P50ms || rep.MaxMs < rep.P99ms {
		t.Errorf("latencies p50 %v p99 %v max %v", rep.P50ms, rep.P99ms, rep.MaxMs)
	}
	if rep.MemPerConnKB <= 0 || rep.StorePutsPerSec <= 0 || rep.StoreGetsPerSec <= 0 || rep.FramesPerSec <= 0 {
		t.Errorf("unmeasured figures: %+v", rep)
	}
	var out bytes.Buffer
	printBenchReport(&out, rep)
	for _, want := range []string{"connections     8 WebSockets (4 owner/viewer pairs)", "latency         p50 ", "store           "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	if _, err := json.Marshal(rep); err != nil {
		t.Fatal(err)
	}
}

func TestCloudBenchClosedLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server and 4 WebSockets")
	}
	o := bench.Options{Pairs: 2, Rate: 0, Inflight: 2, Duration: 500 * time.Millisecond, Payload: 64, StoreWorkers: 1, Setup: 2}
	var log bytes.Buffer
	// Never more than 2 frames in flight per pair: whatever was sent arrived, every one.
	rep, err := bench.Run(context.Background(), o, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if rep.Sent < 10 || rep.Received != rep.Sent || rep.SendErrors != 0 || rep.Refused != 0 || rep.OutOfOrder != 0 {
		t.Fatalf("sent %d, received %d, errors %d, refused %d\n%s", rep.Sent, rep.Received, rep.SendErrors, rep.Refused, log.String())
	}
	var out bytes.Buffer
	printBenchReport(&out, rep)
	if !strings.Contains(out.String(), "(closed loop)") {
		t.Errorf("report:\n%s", out.String())
	}
}
