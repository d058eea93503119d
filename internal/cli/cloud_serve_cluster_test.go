package cli

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/cloud/server/enginetest"
)

// TestCloudServeTwoNodes runs two `harness cloud serve` on one PostgreSQL and one NATS server:
// both start, print the database without its password and their node, answer /v1/meta with the
// same secrets (a PoW salt from one is accepted by the other), and stop cleanly.
func TestCloudServeTwoNodes(t *testing.T) {
	dsn := enginetest.Postgres(t)
	natsURL := enginetest.NATS(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	re := regexp.MustCompile(`serving (http://127\.0\.0\.1:\d+) \(database (.*)\)`)
	type run struct {
		out, errb syncBuffer
		code      chan int
		base      string
	}
	runs := make([]*run, 2)
	for i, name := range []string{"n1", "n2"} {
		r := &run{code: make(chan int, 1)}
		runs[i] = r
		go func() {
			r.code <- CloudServe(ctx, &Env{Args: []string{"--addr", "127.0.0.1:0", "--quiet", "--db", dsn, "--nats", natsURL, "--node", name},
				Stdout: &r.out, Stderr: &r.errb})
		}()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && r.base == ""; time.Sleep(20 * time.Millisecond) {
			if m := re.FindStringSubmatch(r.out.String()); m != nil {
				r.base = m[1]
				if !strings.HasPrefix(m[2], "postgres://") || !strings.HasSuffix(m[2], ", node "+name+" on NATS") {
					t.Errorf("database %q", m[2])
				}
			}
		}
		if r.base == "" {
			t.Fatalf("node %s: no serving line; stdout %q stderr %q", name, r.out.String(), r.errb.String())
		}
	}
	var salts []string
	for _, r := range runs {
		res, err := http.Get(r.base + "/v1/meta")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		salts = append(salts, regexp.MustCompile(`"salt":"[^"]*"`).FindString(string(body)))
	}
	if salts[0] == "" || salts[0] != salts[1] {
		t.Errorf("the nodes announce different PoW salts %q: they do not share the secrets", salts)
	}
	cancel()
	for _, r := range runs {
		select {
		case c := <-r.code:
			if c != ExitOK {
				t.Errorf("exit %d; stderr %s", c, r.errb.String())
			}
		case <-time.After(10 * time.Second):
			t.Fatal("did not stop")
		}
	}
}
