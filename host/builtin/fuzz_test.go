package builtin

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/lang/expr"
)

func FuzzParseLocalTime(f *testing.F) {
	for _, s := range []string{"2026-10-21 18:00", "2026-10-21", "2026-10-21T18:00", " 2026-02-30 ", "明天", "2026-10-21 24:00", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tm, err := ParseLocalTime(s)
		if err != nil {
			if !strings.Contains(err.Error(), "is not a time") {
				t.Fatalf("%q: error %v does not say why", s, err)
			}
			return
		}
		// What it read writes back to the same wall time.
		back := tm.Format("2006-01-02 15:04")
		again, err := ParseLocalTime(back)
		if err != nil || !again.Equal(tm) {
			t.Fatalf("%q -> %s -> %v %v", s, back, again, err)
		}
	})
}

func FuzzParsePeriods(f *testing.F) {
	for _, s := range []string{"3-4", "1", "12", "0", "13", "4-3", "1-2-3", " 5 ", "99-100"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		start, end, err := ParsePeriods(s)
		if err != nil {
			return
		}
		if got := PeriodsOf(start, end); got == "" || !(start < end) {
			t.Fatalf("%q -> %s–%s -> %q", s, start, end, got)
		}
	})
}

// FuzzHarnessTag: any tag is read or refused with an error, never a panic.
func FuzzHarnessTag(f *testing.F) {
	for _, s := range []string{"min=1,max=40,trim", "enum=a|b,default=a", "pattern=^a,b$", "default=", "min=", "x", ",,", "enum=|"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tag string) {
		if strings.ContainsAny(tag, "`\"") {
			return
		}
		typ := reflect.StructOf([]reflect.StructField{{Name: "F", Type: reflect.TypeFor[string](),
			Tag: reflect.StructTag(`json:"f" harness:"` + tag + `"`)}})
		_, _ = FieldsOf(typ)
	})
}

// FuzzBuiltinCall sends any JSON input to every built-in tool through
// Host.Call as the user: each call answers or fails with an error, and no
// tool function panics (a recovered panic says "internal error").
func FuzzBuiltinCall(f *testing.F) {
	e := newEnv(f)
	var tools [][2]string
	for _, c := range All() {
		for _, t := range c.Plugin.Tools {
			tools = append(tools, [2]string{c.Plugin.Manifest.ID, t.Name})
		}
	}
	for i, in := range []string{`{}`, `{"label":"高数"}`, `{"text":"a","daily":"09:00","everyDays":3,"times":16}`,
		`{"text":"a","at":"2026-10-22 08:00"}`, `{"id":1}`, `{"id":1e300}`, `{"title":"x","due":"2026-10-22"}`,
		`{"weekday":3,"periods":"3-4","name":"高数"}`, `{"start":"2026-09-07"}`, `{"uri":"otpauth://totp/a?secret=JBSWY3DPEHPK3PXP"}`,
		`{"x":null}`, `[]`, `"s"`, `null`, `{"text":"\u0000"}`} {
		f.Add(uint8(i), in)
	}
	f.Fuzz(func(t *testing.T, which uint8, input string) {
		in, err := expr.FromJSON([]byte(input))
		if err != nil {
			return
		}
		tl := tools[int(which)%len(tools)]
		_, err = e.h.Call(context.Background(), host.CallRequest{Actor: host.ActorUser, Plugin: tl[0], Tool: tl[1], Input: in})
		if err != nil && strings.Contains(err.Error(), "internal error") {
			t.Fatalf("%s.%s %s: %v", tl[0], tl[1], input, err)
		}
	})
}

// FuzzViewerHello: card-share takes a peer's frame as a hello only when it is exactly
// {"t":"hello"} as JSON (any spacing), never panicking on what a viewer sends.
func FuzzViewerHello(f *testing.F) {
	for _, s := range []string{`{"t":"hello"}`, ` { "t" : "hello" } `, `{"t":"hello","code":"x"}`, `{"t":"Hello"}`, `{"t":["hello"]}`, `[]`, `null`, `{`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ok := viewerHello(json.RawMessage(s))
		var m map[string]any
		want := len(s) <= 256 && json.Unmarshal([]byte(s), &m) == nil && len(m) == 1 && m["t"] == "hello"
		if ok && !want {
			t.Fatalf("%q taken as a hello", s)
		}
	})
}
