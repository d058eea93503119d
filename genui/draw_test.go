package genui

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/lang/expr"
)

func TestDraw(t *testing.T) {
	doc := `{"ui":1,"kind":"widget","title":"空闲","i18n":{"en":{"title":"Free"}},"refresh":"30m",
	"strings":{"zh-Hans":{"free":"空闲","none":"无"},"en":{"free":"Free"}},
	"data":{"o":{"source":"o"}},
	"root":{"type":"Column","children":[
	  {"type":"Stat","label":"${t.free}","value":"${data.o.total}","unit":"${t.none}"},
	  {"type":"Text","text":"${data.o.missing.deep}"},
	  {"type":"Text","when":"${host.size == 'lg'}","text":"big"},
	  {"type":"List","items":"${data.o.rows}","item":"r","limit":"${host.size == 'lg' ? 3 : 2}","template":{"type":"Chip","text":"${index}:${r.name}"},"empty":{"type":"EmptyState","title":"${t.none}"}},
	  {"type":"Button","text":"go","action":{"tool":"book","args":{"room":"${form.room}","n":"${data.o.total}"},"confirm":"Book ${form.room}?"}},
	  {"type":"Field","name":"room","label":"Room","value":"101"},
	  {"type":"Text","text":"$${literal}"}
	]}}`
	data, _ := expr.FromJSON([]byte(`{"total":12,"rows":[{"name":"A"},{"name":"B"},{"name":"C"}]}`))
	empty, _ := expr.FromJSON([]byte(`{"total":0,"rows":[]}`))
	cases := []struct {
		name string
		in   DrawInput
		want []string
		not  []string
	}{
		{"zh md", DrawInput{Size: "md", Data: map[string]any{"o": data}},
			[]string{`"title":"空闲"`, `"value":12`, `"label":"空闲"`, `"text":"0:A"`, `"text":"1:B"`, `"room":"101"`, `"n":12`, `"confirm":"Book 101?"`, `"text":"${literal}"`, `"refresh":1800`, `of null (use ?.)`},
			[]string{`"text":"big"`, `2:C`, `EmptyState`}},
		{"en lg form", DrawInput{Size: "lg", Locale: "en", Data: map[string]any{"o": data}, Form: map[string]any{"room": "202"}},
			[]string{`"title":"Free"`, `"label":"Free"`, `"unit":"无"`, `"text":"big"`, `"room":"202"`, `"text":"2:C"`}, nil},
		{"no data", DrawInput{},
			[]string{`children[3].items`, `"type":"Field"`}, []string{`"type":"Stat"`, `"type":"List"`}},
		{"empty list", DrawInput{Data: map[string]any{"o": empty}}, []string{`"empty":{"title":"无","type":"EmptyState"}`}, []string{`Chip`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Draw(context.Background(), []byte(doc), tc.in)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(d)
			s := string(b)
			for _, w := range tc.want {
				if !strings.Contains(s, w) {
					t.Errorf("missing %s in %s", w, s)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(s, w) {
					t.Errorf("unexpected %s in %s", w, s)
				}
			}
		})
	}
}

func TestDrawRefuses(t *testing.T) {
	for _, doc := range []string{``, `[]`, `{"ui":2,"root":{"type":"Text","text":"x"}}`, `{"ui":1}`} {
		if _, err := Draw(context.Background(), []byte(doc), DrawInput{}); err == nil {
			t.Errorf("Draw(%q) accepted", doc)
		}
	}
}

func TestDrawCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d, err := Draw(ctx, []byte(`{"ui":1,"root":{"type":"Text","text":"x"}}`), DrawInput{Now: time.UnixMilli(0)})
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := d.Root.(map[string]any); m["type"] != "Column" {
		t.Errorf("a cancelled draw drew %v", d.Root)
	}
}

func FuzzDraw(f *testing.F) {
	f.Add([]byte(`{"ui":1,"root":{"type":"List","items":"${[1,2]}","template":{"type":"Text","text":"${item}"}}}`), "md")
	f.Add([]byte(`{"ui":1,"root":{"type":"Button","text":"x","action":{"tool":"a","args":{"x":"${form.q}"}}}}`), "sm")
	f.Fuzz(func(t *testing.T, doc []byte, size string) {
		d, err := Draw(context.Background(), doc, DrawInput{Size: size})
		if err == nil {
			if _, err := json.Marshal(d); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestDrawEnumFromData: an enum prop may be a template, so its value can come from a tool's
// result (a third party's text). What the viewer gets must still be one of the enum's values:
// the web app makes class names of them, and "default sheet" would lift a card's text into a
// fixed sheet over the app (or a Field's input become a password box). Another value is left
// out and listed as a problem.
func TestDrawEnumFromData(t *testing.T) {
	doc := `{"ui":1,"kind":"screen","title":"x","data":{"o":{"source":"o"}},"root":{"type":"Column","gap":"${data.o.v}","children":[
	  {"type":"Text","text":"hi","tone":"${data.o.v}","style":"${data.o.v}"},
	  {"type":"Text","text":"ok","tone":"${data.o.good}"},
	  {"type":"Field","name":"f","label":"F","input":"${data.o.input}"}]}}`
	data, _ := expr.FromJSON([]byte(`{"v":"default sheet","good":"critical","input":"password"}`))
	d, err := Draw(context.Background(), []byte(doc), DrawInput{Data: map[string]any{"o": data}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(d)
	s := string(b)
	for _, bad := range []string{`"default sheet"`, `"password"`} {
		if strings.Contains(s, `:`+bad) {
			t.Errorf("an enum prop drawn as %s: %s", bad, s)
		}
	}
	if !strings.Contains(s, `"tone":"critical"`) || !strings.Contains(s, `"text":"hi"`) || !strings.Contains(s, "not one of") {
		t.Errorf("a good enum value, the node, or the problem is missing: %s", s)
	}
}

// TestDrawNodeBudget: Lists nest, each up to 200 items, so a small widget of an untrusted
// plugin could make the host build (and the browser draw) 200^k nodes. A draw stops at
// MaxDrawnNodes, with a problem saying so.
func TestDrawNodeBudget(t *testing.T) {
	doc := `{"ui":1,"kind":"widget","title":"x","data":{"o":{"source":"o"}},"root":{"type":"List","items":"${data.o}","template":
	  {"type":"List","items":"${data.o}","template":{"type":"Row","children":[{"type":"Text","text":"a"},{"type":"Text","text":"b"}]}}}}`
	rows := make([]any, 200)
	for i := range rows {
		rows[i] = float64(i)
	}
	data, _ := expr.FromGo(rows)
	d, err := Draw(context.Background(), []byte(doc), DrawInput{Data: map[string]any{"o": data}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(d.Root)
	if n := strings.Count(string(b), `"type"`); n > MaxDrawnNodes {
		t.Errorf("%d nodes drawn, want at most %d", n, MaxDrawnNodes)
	}
	if !strings.Contains(strings.Join(d.Problems, "\n"), "nodes") {
		t.Errorf("no problem says the draw was cut: %q", d.Problems)
	}
}
