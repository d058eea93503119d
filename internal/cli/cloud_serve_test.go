package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pkuinfo/harness/cloud/protocol"
)

// syncBuffer is a bytes.Buffer safe for the server goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestCloudServeStartsAndStops runs the command as a fresh machine would (no --db: the XDG data
// directory is created), reads /v1/meta and the demo viewer page, then cancels the context the
// way SIGINT does and expects a clean exit.
func TestCloudServeStartsAndStops(t *testing.T) {
	data := t.TempDir()
	t.Setenv("XDG_DATA_HOME", data)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	code := make(chan int, 1)
	go func() {
		code <- CloudServe(ctx, &Env{Args: []string{"--addr", "127.0.0.1:0", "--quiet"}, Stdout: &out, Stderr: &errb})
	}()
	re := regexp.MustCompile(`serving (http://127\.0\.0\.1:\d+) \(database (.*)\)`)
	var base string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			base = m[1]
			if m[2] != filepath.Join(data, "pku-harness", "cloud", "cloud.db") {
				t.Errorf("database %s", m[2])
			}
			for _, p := range []string{m[2], filepath.Dir(m[2]), filepath.Dir(filepath.Dir(m[2]))} {
				if fi, err := os.Stat(p); err != nil || fi.Mode().Perm()&0o077 != 0 {
					t.Errorf("%s: %v, mode %v: want 0600 files and 0700 folders", p, err, fi.Mode())
				}
			}
			break
		}
	}
	if base == "" {
		t.Fatalf("no serving line; stdout %q stderr %q", out.String(), errb.String())
	}
	res, err := http.Get(base + "/v1/meta")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var m protocol.MetaResponse
	if err := json.Unmarshal(body, &m); err != nil || m.Protocol != 1 || m.Pow.Difficulty != 16 || len(m.Pages) == 0 {
		t.Fatalf("meta: %s %v", body, err)
	}
	res, err = http.Get(base + "/w/demo/view")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(res.Header.Get("Content-Security-Policy"), "connect-src 'self'") {
		t.Errorf("viewer page: %d %v", res.StatusCode, res.Header)
	}
	cancel()
	select {
	case c := <-code:
		if c != ExitOK {
			t.Errorf("exit %d; stderr %s", c, errb.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("did not stop")
	}
	if _, err := os.Stat(filepath.Join(data, "pku-harness", "cloud", "cloud.db")); err != nil {
		t.Errorf("database: %v", err)
	}
	if !strings.HasSuffix(out.String(), "harness cloud: stopped\n") {
		t.Errorf("stdout %q", out.String())
	}
}

// TestCloudServeFunctionPolicy: a bad CLOUD_FN_POLICY stops the server with a message naming
// the variable; "open" turns the functions service on in /v1/meta.
func TestCloudServeFunctionPolicy(t *testing.T) {
	t.Setenv("CLOUD_FN_POLICY", "sometimes")
	var out, errb bytes.Buffer
	if code := CloudServe(context.Background(), &Env{Args: []string{"--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "c.db")}, Stdout: &out, Stderr: &errb}); code != ExitUsage || !strings.Contains(errb.String(), "CLOUD_FN_POLICY") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
	t.Setenv("CLOUD_FN_POLICY", "open")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var sout, serr syncBuffer
	code := make(chan int, 1)
	go func() {
		code <- CloudServe(ctx, &Env{Args: []string{"--addr", "127.0.0.1:0", "--quiet", "--db", filepath.Join(t.TempDir(), "c.db")}, Stdout: &sout, Stderr: &serr})
	}()
	re := regexp.MustCompile(`serving (http://127\.0\.0\.1:\d+)`)
	var base string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && base == ""; time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(sout.String()); m != nil {
			base = m[1]
		}
	}
	if base == "" {
		t.Fatalf("no serving line: %q %q", sout.String(), serr.String())
	}
	res, err := http.Get(base + "/v1/meta")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(body), `"services":["store","channels","functions"]`) {
		t.Errorf("meta: %s", body)
	}
	cancel()
	<-code
}

func TestCloudServeUsage(t *testing.T) {
	tests := []struct {
		args []string
		err  string
	}{
		{[]string{"extra"}, "harness cloud serve: unexpected argument \"extra\"\n"},
		{[]string{"--difficulty", "29"}, "harness cloud serve: --difficulty 29: want 0–28\n"},
		{[]string{"--frames-per-min", "0"}, "harness cloud serve: rate limits must be at least 1\n"},
		{[]string{"--nats", "nats://127.0.0.1:4222", "--db", "x.db"}, "harness cloud serve: --nats needs a --db postgres://… shared by every node (a SQLite file is one node's)\n"},
	}
	for _, tc := range tests {
		var out, errb bytes.Buffer
		if c := CloudServe(context.Background(), &Env{Args: tc.args, Stdout: &out, Stderr: &errb}); c != ExitUsage || errb.String() != tc.err {
			t.Errorf("%v: exit %d, stderr %q", tc.args, c, errb.String())
		}
	}
}
