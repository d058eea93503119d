package stdlib

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"weak"

	"github.com/pkuinfo/harness/lang/expr"
)

var updateHTMLGolden = flag.Bool("update-html", false, "rewrite lang/stdlib/testdata/tablerows/*.json")

const htmlPage = `<html><head><title>T</title><style>p{}</style></head><body>
<div id="list"><a class="room" href="/r/101?x=1&amp;y=2">一教&nbsp;101</a><a class="room" href="/r/102">一教 102</a><a href="/other">其他</a></div>
<p>第一行<br>第二行</p><div>块 <b>粗</b></div><script>var s = '<p>';</script>
</body></html>`

func TestHTMLBuiltins(t *testing.T) {
	vars := expr.MapVars{"page": htmlPage}
	tests := []struct{ name, src, want string }{
		{"html is a node", `typeOf(html(page))`, `"node"`},
		{"html of node", `typeOf(html(html(page)))`, `"node"`},
		{"html null", `html(null)`, `null`},
		{"select", `select(html(page), 'a.room').map(a => htmlText(a))`, `["一教 101","一教 102"]`},
		{"select string", `len(select(page, 'a'))`, `3`},
		{"select method", `html(page).select('#list a').map(a => a.attr('href'))`, `["/r/101?x=1&y=2","/r/102","/other"]`},
		{"select none", `select(page, 'table')`, `[]`},
		{"select null", `select(null, 'a')`, `[]`},
		{"first", `htmlText(first(page, 'a[href^="/r/"]'))`, `"一教 101"`},
		{"first none", `first(page, 'table')`, `null`},
		{"first chain null", `htmlText(first(page, 'table'))`, `null`},
		{"htmlText page", `htmlText(page)`, `"一教 101一教 102其他\n第一行\n第二行\n块 粗"`},
		{"htmlText entities", `htmlText('&lt;b&gt; &amp;&nbsp;&quot;x&quot; &#20013;')`, `"<b> & \"x\" 中"`},
		{"htmlText blocks", `htmlText('<ul><li>a</li><li>b</li></ul><p>c<br><br>d</p>')`, `"a\nb\nc\n\nd"`},
		{"htmlText nbsp", `htmlText('a&nbsp;&nbsp; b')`, `"a b"`},
		{"attr", `attr(first(page, 'a'), 'HREF')`, `"/r/101?x=1&y=2"`},
		{"attr missing", `attr(first(page, 'a'), 'title')`, `null`},
		{"attr string", `attr('<img src="x.png" alt="">', 'alt')`, `""`},
		{"attr null", `attr(null, 'x')`, `null`},
		{"innerHtml", `innerHtml(first(page, 'div'))`, "\"<a class=\\\"room\\\" href=\\\"/r/101?x=1&amp;y=2\\\">一教\u00a0101</a><a class=\\\"room\\\" href=\\\"/r/102\\\">一教 102</a><a href=\\\"/other\\\">其他</a>\""},
		{"outerHtml", `outerHtml(first(page, 'p'))`, `"<p>第一行<br/>第二行</p>"`},
		{"outerHtml string", `outerHtml('<b>x</b>')`, `"<b>x</b>"`},
		{"innerHtml null", `innerHtml(null)`, `null`},
		{"outerHtml number", `outerHtml(5)`, `error: 1:1: outerHtml: argument 1 must be an HTML node or HTML text, got a number`},
		{"htmlText null", `htmlText(null)`, `null`},
		{"select null css", `select(page, null)`, `error: 1:1: select: argument 2 must be a CSS selector string, got null`},
		// errors
		{"bad selector", `select(page, 'a[')`, `error: 1:1: select: bad CSS selector "a[": expected identifier, found EOF instead`},
		{"selector not string", `first(page, 1)`, `error: 1:1: first: argument 2 must be a CSS selector string, got a number`},
		{"not a node", `htmlText(42)`, `error: 1:1: htmlText: argument 1 must be an HTML node or HTML text, got a number`},
		{"html not text", `html([])`, `error: 1:1: html: argument 1 must be HTML text, got a list`},
		{"node in result", `first(page, 'a')`, `json error: `},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := evalDateCase(t, tc.src, vars)
			if tc.want == `json error: ` {
				if !strings.HasPrefix(got, tc.want) {
					t.Errorf("%s\n got: %s\nwant a JSON error", tc.src, got)
				}
				return
			}
			if got != tc.want {
				t.Errorf("%s\n got: %s\nwant: %s", tc.src, got, tc.want)
			}
		})
	}
}

func TestTableRows(t *testing.T) {
	table := `<table>
<tr><th>名称</th><th colspan="2">时间</th><th></th><th>名称</th></tr>
<tr><td rowspan="2">A</td><td colspan="2" rowspan="2">周一</td><td>x</td><td>1</td></tr>
<tr><td>y</td></tr>
<tr><th>B</th><td><table><tr><td>in</td></tr></table></td></tr>
</table>`
	vars := expr.MapVars{"t": table}
	tests := []struct{ name, src, want string }{
		{"header", `tableRows(t, { header: true })`,
			`[{"名称":"A","时间":"周一","时间_2":"周一","col4":"x","名称_2":"1"},` +
				`{"名称":"A","时间":"周一","时间_2":"周一","col4":"y","名称_2":null},` +
				`{"名称":"B","时间":"in","时间_2":null,"col4":null,"名称_2":null}]`},
		{"cells merged ids", `tableRows(t, { cells: true })[1].map(c => c?.id)`, `[4,5,5,6,7]`},
		{"cells second row", `tableRows(t, { cells: true })[2].map(c => c?.id)`, `[4,5,5,8,null]`},
		{"cells slot", `tableRows(t, { cells: true })[2][2]`, `{"text":"周一","row":2,"col":2,"rowspan":2,"colspan":2,"id":5}`},
		{"cells nested not leaked", `tableRows(t, { cells: true })[3]`,
			`[{"text":"B","row":3,"col":0,"rowspan":1,"colspan":1,"id":9},{"text":"in","row":3,"col":1,"rowspan":1,"colspan":1,"id":10},null,null,null]`},
		{"plain", `tableRows(t)`, `[["名称","时间","时间","","名称"],["A","周一","周一","x","1"],["A","周一","周一","y",null],["B","in",null,null,null]]`},
		{"header false", `tableRows(t, { header: false }).map(r => r[0])`, `["名称","A","A","B"]`},
		{"method", `html(t).tableRows({ header: true })[2]['名称']`, `"B"`},
		{"inner table directly", `tableRows(select(t, 'table')[1])`, `[["in"]]`},
		{"no table", `tableRows('<p>x</p>', { header: true })`, `[]`},
		{"null", `tableRows(null)`, `[]`},
		{"header only", `tableRows('<table><tr><th>a</th></tr></table>', { header: true })`, `[]`},
		{"bad option", `tableRows(t, { headers: true })`, `error: 1:1: tableRows: unknown option 'headers' (the options are header and cells)`},
		{"both options", `tableRows(t, { header: true, cells: true })`, `error: 1:1: tableRows: choose one of { header: true } and { cells: true }`},
		{"options not object", `tableRows(t, true)`, `error: 1:1: tableRows: argument 2 must be an options object such as { header: true }, got a boolean`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := evalDateCase(t, tc.src, vars); got != tc.want {
				t.Errorf("%s\n got: %s\nwant: %s", tc.src, got, tc.want)
			}
		})
	}
}

// TestTableRowsGolden runs tableRows in both modes on each testdata/tablerows/NAME.html and
// compares with NAME.json (go test -run TestTableRowsGolden -update-html rewrites them).
func TestTableRowsGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/tablerows/*.html")
	if len(files) == 0 {
		t.Fatal("no golden inputs")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			env := NewEnv()
			x, err := env.Parse(`{ header: tableRows(page, { header: true }), cells: tableRows(page, { cells: true }) }`)
			if err != nil {
				t.Fatal(err)
			}
			v, err := x.Eval(context.Background(), expr.MapVars{"page": string(src)}, expr.NewBudget(100_000))
			if err != nil {
				t.Fatal(err)
			}
			got, err := expr.ToJSON(v, "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden := strings.TrimSuffix(file, ".html") + ".json"
			if *updateHTMLGolden {
				if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update-html to create it)", err)
			}
			if string(got)+"\n" != string(want) {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestHTMLBudget(t *testing.T) {
	page := "<ul>" + strings.Repeat("<li>"+strings.Repeat("x", 500)+"</li>", 2000) + "</ul>" // about 1 MB
	env := NewEnv()
	for _, tc := range []struct {
		src  string
		used int // operations used with a large budget
	}{
		{`html(page)`, 0},
		{`select(html(page), 'li').length`, 0},
		{`htmlText(page)`, 0},
	} {
		x, err := env.Parse(tc.src)
		if err != nil {
			t.Fatal(err)
		}
		b := expr.NewBudget(100)
		_, err = x.Eval(context.Background(), expr.MapVars{"page": page}, b)
		if err == nil || !strings.Contains(err.Error(), "expression budget exceeded (100 operations)") {
			t.Errorf("%s with 100 operations: err = %v", tc.src, err)
		}
	}
	// A merged cell of a million slots is refused before it is laid out.
	x, _ := env.Parse(`tableRows('<table><tr><td colspan=1000 rowspan=1000>x</td></tr>' + '<tr></tr>'.repeat(999) + '</table>')`)
	b := expr.NewBudget(100_000)
	if _, err := x.Eval(context.Background(), nil, b); err == nil || !strings.Contains(err.Error(), "expression budget exceeded") {
		t.Errorf("million-slot cell: err = %v", err)
	}
}

func TestSelectorCachePerEnv(t *testing.T) {
	a, b := NewEnv(), NewEnv()
	if selectorCache(a) != selectorCache(a) {
		t.Error("one Env got two caches")
	}
	if selectorCache(a) == selectorCache(b) {
		t.Error("two Envs share a cache")
	}
	x, _ := a.Parse(`select('<p>1</p><p>2</p>', 'p').map(p => htmlText(p))`)
	for range 3 {
		if _, err := x.Eval(context.Background(), nil, expr.NewBudget(1000)); err != nil {
			t.Fatal(err)
		}
	}
	if n := selectorCache(a).Len(); n != 1 {
		t.Errorf("cache holds %d selectors, want 1", n)
	}
}

// TestSelectorCacheDropped checks that an Env's selector cache goes when the Env does.
func TestSelectorCacheDropped(t *testing.T) {
	var key weak.Pointer[expr.Env]
	func() {
		env := NewEnv()
		selectorCache(env).Compile("p")
		key = weak.Make(env)
		if _, ok := selectorCaches.Load(key); !ok {
			t.Fatal("no cache made")
		}
	}()
	for range 100 {
		runtime.GC()
		if _, ok := selectorCaches.Load(key); !ok {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Error("the cache outlived its Env")
}
