package plugin

import (
	"strings"
	"testing"

	"github.com/pkuinfo/harness/lang/diag"
)

func TestEffectAtLeast(t *testing.T) {
	// want[i][j]: Effects[i].AtLeast(Effects[j]), rows and columns read, write, money, public.
	want := [4][4]bool{
		{true, false, false, false},
		{true, true, false, false},
		{true, true, true, false},
		{true, true, false, true},
	}
	for i, a := range Effects {
		for j, b := range Effects {
			if got := a.AtLeast(b); got != want[i][j] {
				t.Errorf("%s.AtLeast(%s) = %v, want %v", a, b, got, want[i][j])
			}
		}
		if a.AtLeast(0) || Effect(0).AtLeast(a) || Effect(9).AtLeast(EffectRead) {
			t.Errorf("invalid effects compare with %s", a)
		}
	}
}

func TestParseEffect(t *testing.T) {
	for _, e := range Effects {
		got, err := ParseEffect(e.String())
		if err != nil || got != e {
			t.Errorf("ParseEffect(%q) = %v, %v", e.String(), got, err)
		}
		b, _ := e.MarshalText()
		var back Effect
		if err := back.UnmarshalText(b); err != nil || back != e {
			t.Errorf("text round trip of %s gave %s, %v", e, back, err)
		}
	}
	for _, s := range []string{"", "Read", "delete", "read "} {
		if _, err := ParseEffect(s); err == nil || !strings.Contains(err.Error(), "use read, write, money or public") {
			t.Errorf("ParseEffect(%q) error = %v", s, err)
		}
	}
	if got := Effect(7).String(); got != "effect(7)" {
		t.Errorf("Effect(7).String() = %q", got)
	}
	if _, err := Effect(0).MarshalText(); err == nil {
		t.Error("MarshalText of the zero effect succeeded")
	}
}

// TestAbilityCatalogue pins the seed's "Host abilities" table: every group, op and effect.
func TestAbilityCatalogue(t *testing.T) {
	var got []string
	for _, a := range Abilities {
		for _, o := range a.Ops {
			if o.Group != a.Group {
				t.Errorf("%s listed under %s", o.Name(), a.Group)
			}
			got = append(got, o.Name()+"="+o.Effect.String())
		}
	}
	want := "verify.treehole=read verify.treeholeSendCode=write otp.code=read todos.list=read todos.add=write " +
		"todos.update=write todos.setDone=write todos.remove=write timetable.get=read timetable.upsert=write " +
		"timetable.remove=write scheduler.list=read scheduler.create=write scheduler.update=write " +
		"scheduler.remove=write browser.open=read campusPage.open=read sms.awaitCode=read files.pick=read " +
		"crypto.sha256=read cloud.call=read"
	if strings.Join(got, " ") != want {
		t.Errorf("catalogue\n  %s\nwant\n  %s", strings.Join(got, " "), want)
	}
	for _, tc := range []struct {
		name string
		ok   bool
	}{{"todos.add", true}, {"todos", false}, {"todos.fly", false}, {"weather.get", false}, {"", false}} {
		op, ok := LookupAbility(tc.name)
		if ok != tc.ok || (ok && op.Name() != tc.name) {
			t.Errorf("LookupAbility(%q) = %v, %v", tc.name, op, ok)
		}
	}
}

func TestHostAllowed(t *testing.T) {
	network := []string{"portal.pku.edu.cn", "*.example.com"}
	for host, want := range map[string]bool{
		"portal.pku.edu.cn":   true,
		"PORTAL.pku.edu.cn.":  true,
		"x.portal.pku.edu.cn": false,
		"a.example.com":       true,
		"a.b.example.com":     true,
		"example.com":         false,
		"badexample.com":      false,
		"example.com.evil":    false,
	} {
		if got := HostAllowed(host, network); got != want {
			t.Errorf("HostAllowed(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestSortDiagnostics(t *testing.T) {
	at := func(line, col, off int) diag.Pos { return diag.Pos{Line: line, Col: col, Offset: off} }
	ds := []diag.Diagnostic{
		{File: "tools/b.yaml", Pos: at(1, 1, 0), Msg: "b"},
		{File: "tools/a.yaml", Pos: at(2, 3, 20), Msg: "z"},
		{File: "tools/a.yaml", Pos: at(2, 3, 0), Msg: "z"}, // the same problem, placed without an offset
		{File: "tools/a.yaml", Pos: at(2, 3, 20), Msg: "a"},
		{Severity: diag.Warning, File: ManifestFile, Pos: at(9, 1, 90), Msg: "w"},
	}
	var got []string
	for _, d := range SortDiagnostics(ds) {
		got = append(got, d.String())
	}
	want := []string{"PLUGIN.md:9:1: warning: w", "tools/a.yaml:2:3: a", "tools/a.yaml:2:3: z", "tools/b.yaml:1:1: b"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("SortDiagnostics =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestRequires(t *testing.T) {
	tests := []struct {
		m    Manifest
		want string
	}{
		{Manifest{}, ""},
		{Manifest{Campus: []string{"card"}}, "campus-session"},
		{Manifest{Network: []string{"a.com"}, Cloud: &Cloud{}}, "network cloud"},
		{Manifest{Remote: &Remote{}, Server: &Server{}, Campus: []string{"its"}}, "campus-session network cloud"},
	}
	for _, tc := range tests {
		if got := strings.Join(tc.m.Requires(), " "); got != tc.want {
			t.Errorf("Requires() = %q, want %q", got, tc.want)
		}
	}
}

func TestPositionsAt(t *testing.T) {
	ps := Positions{"i18n": {Line: 3, Col: 1}, "i18n.en.tools": {Line: 5, Col: 7}}
	for path, want := range map[string]string{
		"i18n.en.tools.free.title": "5:7",
		"i18n.en.name":             "3:1",
		"id":                       "1:1",
	} {
		if got := ps.At(path).String(); got != want {
			t.Errorf("At(%q) = %s, want %s", path, got, want)
		}
	}
}
