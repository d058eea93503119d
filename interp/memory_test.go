package interp_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/interp"
)

// allocDuring returns the bytes allocated while f ran (the whole process's;
// these tests do not run in parallel).
func allocDuring(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestHostileReplies answers a run as a hostile site would and checks that
// each reply stops at a limit naming it, having allocated a bounded amount:
// a gzip bomb (64 MB of zeros in 64 KB, Content-Encoding: gzip, inflated by
// the transport), a chunked body that never ends, a header of 4 MB, and a
// Content-Length over 2 MB.
func TestHostileReplies(t *testing.T) {
	var bomb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestCompression)
	zeros := make([]byte, 1<<20)
	for range 64 {
		zw.Write(zeros)
	}
	zw.Close()
	rt := testServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/bomb":
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("Content-Type", "text/plain")
			w.Write(bomb.Bytes())
		case "/endless":
			chunk := bytes.Repeat([]byte("a"), 32<<10)
			for r.Context().Err() == nil {
				if _, err := w.Write(chunk); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		case "/headers":
			v := strings.Repeat("v", 1000)
			for i := range 4000 {
				w.Header().Set("X-Big-"+strconv.Itoa(i), v)
			}
			w.Write([]byte("ok"))
		case "/length":
			w.Header().Set("Content-Length", strconv.Itoa(3<<20))
			if r.Method != http.MethodHead {
				w.Write(make([]byte, 3<<20))
			}
		}
	}))
	tests := []struct {
		path, want string
	}{
		{"/bomb", "response: more than 2 MB from https://a.example.com/bomb, the limit is 2 MB"},
		{"/endless", "response: more than 2 MB from https://a.example.com/endless, the limit is 2 MB"},
		{"/headers", "response headers: "},
		{"/length", "response: 3145728 bytes from https://a.example.com/length, the limit is 2 MB"},
		{"/length HEAD", ""}, // a HEAD reply declares a length it does not send
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			path, method, _ := strings.Cut(tc.path, " ")
			if method == "" {
				method = "GET"
			}
			p := loadPlugin(t, map[string]string{"main": `title: T
description: d
effect: read
steps:
  - let: r
    request: { url: 'https://a.example.com` + path + `', method: ` + method + `, as: response }
return: r.status
`})
			var err error
			alloc := allocDuring(func() {
				_, err = interp.Run(context.Background(), p, "main", nil, interp.Options{Transport: rt})
			})
			var e *interp.Error
			if tc.want == "" {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
			} else if !errors.As(err, &e) || e.Kind != interp.KindLimit || !strings.Contains(e.Msg, tc.want) {
				t.Fatalf("err = %v, want a limit error saying %q", err, tc.want)
			}
			// The body is read through a 2 MB cap (io.ReadAll doubles its buffer: ≤ 8 MB) and a
			// header is 4 MB at most on the wire; nothing else grows with the reply.
			if alloc > 32<<20 {
				t.Errorf("the run allocated %d MB", alloc>>20)
			}
		})
	}
}

// TestDecodedTextIsCharged checks that a reply whose charset conversion
// makes the text larger (windows-1252 bytes 0x80 → "€", three bytes each)
// is charged for the text it keeps: twenty 2 MB replies kept in a list
// would hold 120 MB of text for 41,000 operations; charged by the decoded
// size they are over the 100,000 operations.
func TestDecodedTextIsCharged(t *testing.T) {
	body := bytes.Repeat([]byte{0x80}, 2<<20-1)
	rt := testServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=windows-1252")
		w.Write(body)
	}))
	p := loadPlugin(t, map[string]string{"main": `title: T
description: d
effect: read
steps:
  - let: pages
    each: range(20)
    concurrency: 4
    request: { url: 'https://a.example.com/p?i=${item}', as: text }
return: len(pages)
`})
	_, err := interp.Run(context.Background(), p, "main", nil, interp.Options{Transport: rt})
	var e *interp.Error
	if !errors.As(err, &e) || e.Kind != interp.KindLimit || !strings.Contains(e.Msg, "operations") {
		t.Fatalf("err = %v, want the operations limit", err)
	}
}

// TestParsedRepliesCharged checks that a reply read `as: json` or
// `as: html` is parsed by the json and html built-ins, and so charged as
// they are, on top of reading it: thirty 2 MB documents kept in a list are
// over the operations limit (read alone, they cost 61,000), and markup
// nested too deep is an http error naming the reply.
func TestParsedRepliesCharged(t *testing.T) {
	doc := `["` + strings.Repeat("x", 2<<20-10) + `"]`
	rt := testServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/deep":
			w.Write([]byte(strings.Repeat("<div>", 600)))
		case "/json":
			w.Write([]byte(doc))
		default:
			w.Write([]byte("<p>" + strings.Repeat("x", 2<<20-10) + "</p>"))
		}
	}))
	tests := []struct {
		as, path, kind, want string
	}{
		{"json", "/json", interp.KindLimit, "operations"},
		{"html", "/html", interp.KindLimit, "operations"},
		{"html", "/deep", interp.KindHTTP, "is not HTML: "},
	}
	for _, tc := range tests {
		t.Run(tc.as+tc.path, func(t *testing.T) {
			p := loadPlugin(t, map[string]string{"main": `title: T
description: d
effect: read
steps:
  - let: pages
    each: range(30)
    concurrency: 4
    request: { url: 'https://a.example.com` + tc.path + `?i=${item}', as: ` + tc.as + ` }
return: len(pages)
`})
			_, err := interp.Run(context.Background(), p, "main", nil, interp.Options{Transport: rt})
			var e *interp.Error
			if !errors.As(err, &e) || e.Kind != tc.kind || !strings.Contains(e.Msg, tc.want) {
				t.Fatalf("err = %v, want a %s error saying %q", err, tc.kind, tc.want)
			}
			if !strings.HasPrefix(e.Error(), "tools/main.yaml:5:5: steps[0] (let pages): ") || strings.Contains(e.Error(), "1:1:") {
				t.Errorf("err = %q is not placed at the step", e.Error())
			}
		})
	}
}

// TestTricklingReply checks that a reply that never ends, one byte at a
// time (under the 2 MB for as long as anyone waits), is stopped by the
// run's deadline with the time limit's error.
func TestTricklingReply(t *testing.T) {
	rt := testServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for r.Context().Err() == nil {
			if _, err := w.Write([]byte("x")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Millisecond):
			}
		}
	}))
	p := loadPlugin(t, map[string]string{"main": "title: T\ndescription: d\neffect: read\nsteps:\n  - let: r\n    request: { url: 'https://a.example.com/t' }\nreturn: r\n"})
	_, err := interp.Run(context.Background(), p, "main", nil, interp.Options{Transport: rt, TimeLimit: 200 * time.Millisecond})
	var e *interp.Error
	if !errors.As(err, &e) || e.Kind != interp.KindLimit || !strings.Contains(e.Msg, "time: the run took more than 200ms") {
		t.Fatalf("err = %v, want the time limit", err)
	}
}
