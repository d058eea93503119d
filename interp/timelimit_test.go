package interp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/interp/kvstore"
)

// stuckTransport answers nothing until release is closed, ignoring the
// request's context, as a broken or hostile transport would.
type stuckTransport struct{ release chan struct{} }

func (s stuckTransport) RoundTrip(*http.Request) (*http.Response, error) {
	<-s.release
	return nil, errors.New("released")
}

// trickleTransport answers at once with a body that sends one byte and then
// never another, ignoring the context (closing the body ends it).
type trickleTransport struct{}

func (trickleTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	pr, pw := io.Pipe()
	go func() { pw.Write([]byte("x")) }() // then nothing: the body never ends
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: pr, Request: r}, nil
}

// stuckAbilities is a host ability that waits (as sms.awaitCode would)
// without looking at its context until release is closed.
type stuckAbilities struct{ release chan struct{} }

func (s stuckAbilities) Call(context.Context, interp.AbilityCall) (any, error) {
	<-s.release
	return "late", nil
}

// stuckKV is a KV store whose reads hang, ignoring the context.
type stuckKV struct {
	interp.KV
	release chan struct{}
}

func (s stuckKV) Get(context.Context, string, string) (interp.Entry, bool, error) {
	<-s.release
	return interp.Entry{}, false, nil
}

// TestTimeLimit checks that a run whose step would take minutes stops at
// the run's time limit (shortened here) with a limit error naming the
// limit, whatever it is blocked in: a transport that ignores its context,
// a body that never ends, a host ability or a KV store that waits, or a
// callee two calls deep (calls share the one deadline).
func TestTimeLimit(t *testing.T) {
	const limit = 150 * time.Millisecond
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	slowSite := testServer(t, siteHandler()) // /slow answers after 10 s, honouring the context
	const head = "title: T\ndescription: d\neffect: read\n"
	tests := []struct {
		name  string
		tools map[string]string
		opts  interp.Options
		want  string // the error, after the file name
	}{
		{"transport ignores the context", map[string]string{"main": head + `
steps:
  - let: r
    request: { url: https://a.example.com/x }
return: r
`}, interp.Options{Transport: stuckTransport{release}}, `tools/main.yaml:6:5: steps[0] (let r): time: the run took more than 150ms, the limit is 150ms`},
		{"body never ends", map[string]string{"main": head + `
steps:
  - let: r
    request: { url: https://a.example.com/x }
return: r
`}, interp.Options{Transport: trickleTransport{}}, `tools/main.yaml:6:5: steps[0] (let r): time: the run took more than 150ms, the limit is 150ms`},
		{"slow site", map[string]string{"main": head + `
steps:
  - let: r
    request: { url: https://a.example.com/slow }
return: r
`}, interp.Options{Transport: slowSite}, `tools/main.yaml:6:5: steps[0] (let r): time: the run took more than 150ms, the limit is 150ms`},
		{"ability waits", map[string]string{"main": head + `
steps:
  - let: r
    ability: todos.list
return: r
`}, interp.Options{Abilities: stuckAbilities{release}}, `tools/main.yaml:6:5: steps[0] (let r): time: the run took more than 150ms, the limit is 150ms`},
		{"kv waits", map[string]string{"main": head + `
steps:
  - let: r
    kv: get
    key: "'a'"
return: r
`}, interp.Options{KV: stuckKV{kvstore.NewMemory(), release}}, `tools/main.yaml:6:5: steps[0] (let r): time: the run took more than 150ms, the limit is 150ms`},
		{"nested calls share the deadline", map[string]string{
			"main": head + "steps:\n  - let: r\n    call: mid\n    input: '{}'\nreturn: r\n",
			"mid":  head + "steps:\n  - let: r\n    call: leaf\n    input: '{}'\nreturn: r\n",
			"leaf": head + "steps:\n  - let: r\n    request: { url: https://a.example.com/slow }\nreturn: r\n",
		}, interp.Options{Transport: slowSite}, `tools/leaf.yaml:5:5: steps[0] (let r): time: the run took more than 150ms, the limit is 150ms`},
		{"retries in a catch do not escape", map[string]string{"main": head + `
steps:
  - try:
      - let: r
        request: { url: https://a.example.com/slow }
    catch:
      - let: r
        request: { url: https://a.example.com/slow }
return: r
`}, interp.Options{Transport: slowSite}, `tools/main.yaml:7:9: steps[0].try[0] (let r): time: the run took more than 150ms, the limit is 150ms`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := loadPlugin(t, tc.tools)
			o := tc.opts
			o.TimeLimit = limit
			start := time.Now()
			_, err := interp.Run(context.Background(), p, "main", nil, o)
			took := time.Since(start)
			t.Logf("stopped %v after the limit", took-limit)
			// Generous for a loaded machine; the design keeps within limit + runGrace (5 ms) + scheduling.
			if took > limit+time.Second {
				t.Errorf("Run took %v with a %v limit", took, limit)
			}
			var e *interp.Error
			if !errors.As(err, &e) || e.Kind != interp.KindLimit {
				t.Fatalf("err = %v, want a limit error", err)
			}
			if !strings.Contains(e.Msg, "time: the run took more than 150ms, the limit is 150ms") {
				t.Errorf("message %q does not name the time limit", e.Msg)
			}
			if !strings.HasPrefix(e.Error(), tc.want) {
				t.Errorf("err = %q, want it to start with %q", e.Error(), tc.want)
			}
		})
	}
}

// TestTimeLimitOption checks the option's range: zero is the seed's 60 s,
// and a limit over it (or negative) is refused rather than silently kept.
func TestTimeLimitOption(t *testing.T) {
	p := loadPlugin(t, map[string]string{"main": "title: T\ndescription: d\neffect: read\nreturn: 1\n"})
	if v, err := interp.Run(context.Background(), p, "main", nil, interp.Options{}); err != nil || v != 1.0 {
		t.Fatalf("zero TimeLimit: %v, %v", v, err)
	}
	for _, d := range []time.Duration{-time.Second, interp.MaxRunTime + time.Nanosecond, time.Hour} {
		_, err := interp.Run(context.Background(), p, "main", nil, interp.Options{TimeLimit: d})
		var e *interp.Error
		if !errors.As(err, &e) || e.Kind != interp.KindInput || !strings.Contains(e.Msg, "time limit") {
			t.Errorf("TimeLimit %v: err = %v, want an input error about the time limit", d, err)
		}
	}
}

// recordingKV counts writes.
type recordingKV struct {
	interp.KV
	sets chan string
}

func (k recordingKV) Set(ctx context.Context, plugin, key string, e interp.Entry) error {
	k.sets <- key
	return k.KV.Set(ctx, plugin, key, e)
}

// TestNoWritesAfterTheDeadline checks that a run Run has given up on
// writes nothing when the service it waited on answers late: the cache
// step around a late ability stores nothing.
func TestNoWritesAfterTheDeadline(t *testing.T) {
	release := make(chan struct{})
	returned := make(chan struct{})
	ab := lateAbilities{release, returned}
	kv := recordingKV{kvstore.NewMemory(), make(chan string, 4)}
	p := loadPlugin(t, map[string]string{"main": `title: T
description: d
effect: read
steps:
  - let: r
    cache: { key: k, ttl: 1h }
    steps:
      - let: v
        ability: todos.list
return: r
`})
	_, err := interp.Run(context.Background(), p, "main", nil, interp.Options{Abilities: ab, KV: kv, TimeLimit: 50 * time.Millisecond})
	var e *interp.Error
	if !errors.As(err, &e) || e.Kind != interp.KindLimit {
		t.Fatalf("err = %v, want the time limit", err)
	}
	close(release)
	<-returned
	select {
	case key := <-kv.sets:
		t.Fatalf("the abandoned run wrote %q", key)
	case <-time.After(200 * time.Millisecond):
	}
}

// lateAbilities answers once release is closed, ignoring its context, and
// then closes returned.
type lateAbilities struct{ release, returned chan struct{} }

func (l lateAbilities) Call(context.Context, interp.AbilityCall) (any, error) {
	<-l.release
	defer close(l.returned)
	return "late", nil
}

// TestTimeLimitInExpression checks that an expression whose built-in would
// run long (a bounded repeat over a long text, slow for RE2 however few
// operations it is charged) ends the run with a limit error at the time
// limit at the latest: the time limit, or the operations limit once the
// built-in is charged for that work.
func TestTimeLimitInExpression(t *testing.T) {
	p := loadPlugin(t, map[string]string{"main": `title: T
description: d
effect: read
steps:
  - let: t
    value: "repeat(repeat('ab', 1000), 100)"
  - let: r
    value: "test(t, '[a-z]{1000}x')"
return: r
`})
	const limit = 150 * time.Millisecond
	start := time.Now()
	_, err := interp.Run(context.Background(), p, "main", nil, interp.Options{TimeLimit: limit})
	if took := time.Since(start); took > limit+time.Second {
		t.Errorf("Run took %v with a %v limit", took, limit)
	}
	var e *interp.Error
	if !errors.As(err, &e) || e.Kind != interp.KindLimit {
		t.Fatalf("err = %v, want a limit error", err)
	}
	if !strings.HasPrefix(e.Error(), "tools/main.yaml:7:5: steps[1] (let r)") {
		t.Errorf("err = %q, want it placed at the step", e.Error())
	}
}
