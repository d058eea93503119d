package interp_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/interp"
)

// TestRequestWalksCharged sends a request whose json, form, query or body is
// a value of shared parts (2^22 leaves built in 22 steps): encoding it is
// charged to the run's budget as it walks, so the run stops at the budget
// instead of walking millions of values for free.
func TestRequestWalksCharged(t *testing.T) {
	rt := testServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("{}"))
	}))
	const big = `range(22).reduce((acc, i) => [acc, acc], "x")`
	tests := []struct{ name, request string }{
		{"json", `{ url: 'https://a.example.com/j', method: POST, json: '${` + big + `}' }`},
		{"form", `{ url: 'https://a.example.com/f', method: POST, form: { a: '${` + big + `}' } }`},
		{"query", `{ url: 'https://a.example.com/q', query: { a: '${[` + big + `]}' } }`},
		{"body", `{ url: 'https://a.example.com/b', method: POST, body: '${` + big + `}' }`},
		{"url", `{ url: 'https://a.example.com/${` + big + `}' }`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := loadPlugin(t, map[string]string{"main": `title: T
description: d
effect: read
steps:
  - let: r
    request: ` + tc.request + `
return: r
`})
			_, err := interp.Run(context.Background(), p, "main", nil, interp.Options{Transport: rt})
			var e *interp.Error
			if !errors.As(err, &e) || e.Kind != interp.KindLimit || !strings.Contains(e.Msg, "operations") {
				t.Fatalf("err = %v (kind %q), want the operations limit", err, e.Kind)
			}
		})
	}
}

// TestExtractCharged attacks extract: a page of 200,000 "<br>" parsed from a
// string (each element a node of some 200 bytes in memory, where the text is
// 4 bytes), three times; and a field's match pipe scanning 100 KB of text
// with a pattern of hundreds of instructions, for each of 20 items. Both are
// charged as html() and match() are, so both stop at the budget.
func TestExtractCharged(t *testing.T) {
	tests := []struct{ name, steps string }{
		{"parse", `  - let: page
    value: range(200).map(i => repeat("<br>", 1000)).join("")
  - let: r1
    extract:
      from: page
      each: p
      fields: { x: a }
  - let: r2
    extract:
      from: page
      each: p
      fields: { x: a }
  - let: r
    extract:
      from: page
      each: p
      fields: { x: a }
`},
		{"match", `  - let: page
    value: range(20).map(i => "<p>" + range(100).map(j => repeat("a", 1000)).join("") + "</p>").join("")
  - let: r
    extract:
      from: page
      each: p
      fields: { x: '. | text | match "([ab]{300}z)"' }
`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := loadPlugin(t, map[string]string{"main": "title: T\ndescription: d\neffect: read\nsteps:\n" + tc.steps + "return: len(r)\n"})
			_, err := interp.Run(context.Background(), p, "main", nil, interp.Options{})
			var e *interp.Error
			if !errors.As(err, &e) || e.Kind != interp.KindLimit || !strings.Contains(e.Msg, "operations") {
				t.Fatalf("err = %v, want the operations limit", err)
			}
		})
	}
}

// TestInputPatternCharged sends an input of 1 MB to a tool whose field must
// match a pattern of hundreds of instructions: the scan is charged as test()
// is (text length times program size), before it runs, so the call stops at
// the budget rather than scanning for seconds for free. A long value that
// does not match is shown cut short in the error.
func TestInputPatternCharged(t *testing.T) {
	p := loadPlugin(t, map[string]string{"main": `title: T
description: d
effect: read
input:
  a: { type: string, pattern: '[ab]{400}z' }
  b: { type: string, optional: true, pattern: '[ab]{3}z' }
return: input.a
`})
	big := strings.Repeat("a", 1<<20)
	in := fromJSON(t, `{"a":"`+big+`"}`)
	_, err := interp.Run(context.Background(), p, "main", in, interp.Options{})
	var e *interp.Error
	if !errors.As(err, &e) || e.Kind != interp.KindLimit || !strings.Contains(e.Msg, "operations") {
		t.Fatalf("err = %v, want the operations limit", err)
	}
	_, err = interp.CheckInput(p.Tool("main"), in)
	if !errors.As(err, &e) || e.Kind != interp.KindLimit {
		t.Fatalf("CheckInput: err = %v, want the operations limit", err)
	}

	in = fromJSON(t, `{"a":"`+big[:1000]+`z","b":"`+big[:400000]+`"}`)
	_, err = interp.Run(context.Background(), p, "main", in, interp.Options{})
	if !errors.As(err, &e) || e.Kind != interp.KindInput || len(e.Msg) > 200 || !strings.Contains(e.Msg, `input.b: must match [ab]{3}z (got "aaaa`) {
		t.Fatalf("err = %v, want a short input error", err)
	}
}

// TestInputErrorShowsLittle sends 1 MB values that are not among a field's
// enum: the error shows 40 characters of each, having encoded a few hundred
// bytes of it rather than the whole value (and its runes) to cut it.
func TestInputErrorShowsLittle(t *testing.T) {
	p := loadPlugin(t, map[string]string{"main": `title: T
description: d
effect: read
input:
  day: { enum: [today, tomorrow] }
return: input.day
`})
	big := strings.Repeat("日", 1<<18)
	for _, in := range []any{fromJSON(t, `{"day":"`+big+`"}`), fromJSON(t, `{"day":["`+big+`"]}`)} {
		var err error
		alloc := allocDuring(func() { _, err = interp.CheckInput(p.Tool("main"), in) })
		var e *interp.Error
		if !errors.As(err, &e) || e.Kind != interp.KindInput || len(e.Msg) > 300 {
			t.Fatalf("err = %v, want a short input error", err)
		}
		if alloc > 64<<10 {
			t.Errorf("the error allocated %d bytes to show a 768 KB value", alloc)
		}
	}
}

// TestReplyOfManyValuesCharged answers `as: json` with 2 MB of empty
// objects (some 700,000 values, each several allocations) and `as: html`
// with 2 MB of "<br>" (500,000 elements): the reply is parsed by the json and
// html built-ins, charged per value or node before the parse, so one reply
// is over the budget, where its kilobytes alone would cost some 2,000.
func TestReplyOfManyValuesCharged(t *testing.T) {
	rt := testServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/json" {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte("[" + strings.Repeat("{},", 2<<20/3-2) + "{}]"))
			return
		}
		w.Write([]byte(strings.Repeat("<br>", 2<<20/4-1)))
	}))
	for _, as := range []string{"json", "html"} {
		t.Run(as, func(t *testing.T) {
			p := loadPlugin(t, map[string]string{"main": `title: T
description: d
effect: read
steps:
  - let: r
    request: { url: 'https://a.example.com/` + as + `', as: ` + as + ` }
return: "1"
`})
			_, err := interp.Run(context.Background(), p, "main", nil, interp.Options{Transport: rt})
			var e *interp.Error
			if !errors.As(err, &e) || e.Kind != interp.KindLimit || !strings.Contains(e.Msg, "operations") {
				t.Fatalf("err = %v, want the operations limit", err)
			}
		})
	}
}

// TestExtractSelectorCharged gives extract 500 nested <div>s and a selector
// whose descendant steps cascadia alone would try in every combination of
// ancestors (500^5 ways, for an "x" that is not there), as an item selector
// and as a field's: matching is charged and memoized as select() and first()
// are, so the run ends at once, with its result or a limit error.
func TestExtractSelectorCharged(t *testing.T) {
	for _, tc := range []struct{ name, each, field string }{
		{"each", "x div div div div div", "."},
		{"field", "body", "x div div div div div"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := loadPlugin(t, map[string]string{"main": `title: T
description: d
effect: read
steps:
  - let: r
    extract:
      from: repeat("<div>", 500)
      each: '` + tc.each + `'
      fields: { x: '` + tc.field + `' }
return: len(r)
`})
			done := make(chan error, 1)
			go func() {
				_, err := interp.Run(context.Background(), p, "main", nil, interp.Options{})
				done <- err
			}()
			select {
			case err := <-done:
				var e *interp.Error
				if err != nil && (!errors.As(err, &e) || e.Kind != interp.KindLimit) {
					t.Fatalf("err = %v, want a result or a limit error", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("extract still matching after 5 s")
			}
		})
	}
}
