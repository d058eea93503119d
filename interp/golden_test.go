package interp_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/tools/txtar"

	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/interp/kvstore"
)

var update = flag.Bool("update", false, "rewrite the want section of testdata/run/*.txtar")

// siteHandler serves every route the golden cases use, for any host.
func siteHandler() http.Handler {
	mux := http.NewServeMux()
	echo := func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"host":%q,"method":%q,"path":%q,"query":%q,"ct":%q,"body":%q,"x":%q}`,
			r.Host, r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Content-Type"), body, r.Header.Get("X-Test"))
	}
	mux.HandleFunc("/echo", echo)
	mux.HandleFunc("/text", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("plain " + r.URL.Query().Get("q")))
	})
	mux.HandleFunc("/bom", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("\xef\xbb\xbf{\"ok\":true}"))
	})
	gbk := func(s string) []byte {
		b, _ := simplifiedchinese.GBK.NewEncoder().Bytes([]byte(s))
		return b
	}
	const rooms = `<html><head><title>空闲教室</title></head><body>
<table id="rooms"><tr><th>教室</th><th>座位</th></tr>
<tr class="r"><td><a href="/room/101">二教101</a></td><td>120 人</td></tr>
<tr class="r"><td><a href="room/102?x=1">二教102</a></td><td>60人</td></tr>
<tr class="r"><td><a href="https://b.example.org/103">理教103</a></td><td>无</td></tr>
</table><p class="date">2026年3月2日 08:30</p></body></html>`
	mux.HandleFunc("/gbk", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=GBK")
		w.Write(gbk(rooms))
	})
	mux.HandleFunc("/gbkmeta/list", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write(gbk(strings.Replace(rooms, "<head>", `<head><meta http-equiv="Content-Type" content="text/html; charset=gb2312">`, 1)))
	})
	mux.HandleFunc("/status/", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/status/"))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(n)
		fmt.Fprintf(w, `{"status":%d}`, n)
	})
	// /pages?p=N: items [2N, 2N+1]; next is N+1 while N < last (default 3).
	mux.HandleFunc("/pages", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("p"))
		last := 3
		if l := r.URL.Query().Get("last"); l != "" {
			last, _ = strconv.Atoi(l)
		}
		next := "null"
		if n < last {
			next = strconv.Itoa(n + 1)
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"items":[%d,%d],"next":%s,"link":"/pages?p=%d&last=%d","x":%q}`, 2*n, 2*n+1, next, n+1, last, r.Header.Get("X-Test"))
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			// The client gave up; answering now could race with its
			// cancellation and be taken as a reply, so send nothing.
			panic(http.ErrAbortHandler)
		case <-time.After(10 * time.Second):
		}
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("Content-Type", "text/plain")
		w.Write(bytes.Repeat([]byte("a"), n))
	})
	return mux
}

// fakeAbilities answers crypto.sha256 and todos.* from a script and
// records calls.
type fakeAbilities struct {
	mu    sync.Mutex
	calls []string
}

func (f *fakeAbilities) Call(ctx context.Context, c interp.AbilityCall) (any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf("%s.%s by %s/%s (%s) args %s", c.Group, c.Op, c.Plugin, c.Tool, c.ToolEffect, mustText(c.Args)))
	switch c.Group + "." + c.Op {
	case "crypto.sha256":
		return map[string]any{"hex": "ab12"}, nil
	case "todos.list":
		return []any{"buy milk"}, nil
	}
	return nil, errors.New("not available in tests")
}

func mustText(v any) string {
	b, err := exprToJSON(v)
	if err != nil {
		return err.Error()
	}
	return b
}

type fakeCampus struct{ rt http.RoundTripper }

// Do sends campus requests to the test server's host "campus-SERVICE".
func (f fakeCampus) Do(ctx context.Context, service string, req *http.Request) (*http.Response, error) {
	req = req.Clone(ctx)
	req.URL.Scheme, req.URL.Host = "https", service+".campus.test"
	req.Host = req.URL.Host
	return f.rt.RoundTrip(req)
}

// TestGolden runs every testdata/run/*.txtar case: the tools in tools/,
// the input in input.json, initial KV in kv.json (key → value, or
// {"value", "expiresIn"} with a Go duration), and compares the requests
// sent, the ability calls and the result or error with the want section.
// The comment may hold "unordered" (sort request lines) and "timelimit D".
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/run/*.txtar")
	if len(files) == 0 {
		t.Fatal("no golden cases")
	}
	rt := testServer(t, siteHandler())
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			got := runArchive(t, ar, rt)
			var want *txtar.File
			for i := range ar.Files {
				if ar.Files[i].Name == "want" {
					want = &ar.Files[i]
				}
			}
			if *update {
				if want == nil {
					ar.Files = append(ar.Files, txtar.File{Name: "want"})
					want = &ar.Files[len(ar.Files)-1]
				}
				want.Data = []byte(got)
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if want == nil {
				t.Fatal("no want section (run with -update)")
			}
			if got != string(want.Data) {
				t.Errorf("got:\n%s\nwant:\n%s", got, want.Data)
			}
		})
	}
}

func runArchive(t *testing.T, ar *txtar.Archive, rt http.RoundTripper) string {
	t.Helper()
	tools := map[string]string{}
	var input any
	kv := kvstore.NewMemory()
	for _, f := range ar.Files {
		switch {
		case strings.HasPrefix(f.Name, "tools/"):
			tools[strings.TrimSuffix(strings.TrimPrefix(f.Name, "tools/"), ".yaml")] = string(f.Data)
		case f.Name == "input.json":
			input = fromJSON(t, string(f.Data))
		case f.Name == "kv.json":
			seedKV(t, kv, string(f.Data))
		}
	}
	comment := string(ar.Comment)
	var timeLimit time.Duration
	if i := strings.Index(comment, "timelimit "); i >= 0 {
		d, err := time.ParseDuration(strings.Fields(comment[i+len("timelimit "):])[0])
		if err != nil {
			t.Fatal(err)
		}
		timeLimit = d
	}
	p := loadPlugin(t, tools)
	var (
		mu   sync.Mutex
		reqs []string
	)
	ab := &fakeAbilities{}
	opts := interp.Options{
		Transport: rt,
		Campus:    fakeCampus{rt},
		Abilities: ab,
		KV:        kv,
		Now:       func() time.Time { return fixedNow },
		TimeLimit: timeLimit,
		OnRequest: func(r interp.RequestRecord) {
			line := "request " + r.Method + " " + r.URL
			if r.Campus != "" {
				line = "request campus " + r.Campus + " " + r.Method + " " + r.URL
			}
			if len(r.Body) > 0 {
				line += " body " + strconv.Quote(string(r.Body))
			}
			mu.Lock()
			reqs = append(reqs, line)
			mu.Unlock()
		},
	}
	v, err := interp.Run(context.Background(), p, "main", input, opts)
	if strings.Contains(comment, "unordered") {
		sort.Strings(reqs)
	}
	var b strings.Builder
	for _, r := range reqs {
		b.WriteString(r + "\n")
	}
	for _, c := range ab.calls {
		b.WriteString("ability " + c + "\n")
	}
	if err != nil {
		var e *interp.Error
		if !errors.As(err, &e) {
			t.Fatalf("error %v is not an *interp.Error", err)
		}
		fmt.Fprintf(&b, "error %s: %s\n", e.Kind, e)
	} else {
		fmt.Fprintf(&b, "result %s\n", toJSON(t, v))
	}
	for _, k := range []string{"a", "b", "rooms", "rooms:today"} {
		if e, ok, _ := kv.Get(context.Background(), "test-plugin", k); ok {
			exp := "never"
			if !e.Expires.IsZero() {
				exp = e.Expires.Sub(fixedNow).String()
			}
			fmt.Fprintf(&b, "kv %s = %s (expires %s)\n", k, toJSON(t, e.Value), exp)
		}
	}
	return b.String()
}

func seedKV(t *testing.T, kv interp.KV, src string) {
	obj, ok := fromJSON(t, src).(interface {
		Keys() []string
		Get(string) (any, bool)
	})
	if !ok {
		t.Fatal("kv.json must be an object")
	}
	for _, k := range obj.Keys() {
		v, _ := obj.Get(k)
		e := interp.Entry{Value: v}
		if o, ok := v.(interface{ Get(string) (any, bool) }); ok {
			if in, ok := o.Get("expiresIn"); ok {
				d, err := time.ParseDuration(in.(string))
				if err != nil {
					t.Fatal(err)
				}
				val, _ := o.Get("value")
				e = interp.Entry{Value: val, Expires: fixedNow.Add(d)}
			}
		}
		if err := kv.Set(context.Background(), "test-plugin", k, e); err != nil {
			t.Fatal(err)
		}
	}
}
