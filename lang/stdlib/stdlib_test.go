package stdlib

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/lang/expr"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// libVars are the variables of the library tests: rows shaped like a classroom reply.
func libVars(t testing.TB) expr.MapVars {
	t.Helper()
	rows, err := expr.FromJSON([]byte(`[
		{"room": "101", "cap": "60人", "b": "一教", "tags": ["a"]},
		{"room": "205", "cap": 30, "b": "二教", "tags": []},
		{"room": "102", "cap": "120", "b": "一教", "tags": ["b", "a"]},
		{"room": "310", "cap": null, "b": "三教"}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	return expr.MapVars{"rows": rows, "none": nil, "now": 1709620215250.0}
}

// evalLib evaluates src with the library and returns its compact JSON, or "error: " and the
// message (with its kind when it is a limit).
func evalLib(t testing.TB, src string, vars expr.MapVars, budget int) string {
	t.Helper()
	return evalLibCtx(t, context.Background(), src, vars, budget)
}

// evalLibCtx is evalLib under ctx.
func evalLibCtx(t testing.TB, ctx context.Context, src string, vars expr.MapVars, budget int) string {
	t.Helper()
	env := NewEnv()
	x, err := env.Parse(src)
	if err != nil {
		return "parse error: " + err.Error()
	}
	if errs := x.Check(func(n string) bool { _, ok := vars[n]; return ok }); len(errs) > 0 {
		return "check error: " + errs.Error()
	}
	b := expr.NewBudget(budget)
	v, err := x.Eval(ctx, vars, b)
	if b.Used() > budget {
		t.Errorf("%s: used %d > %d", src, b.Used(), budget)
	}
	if err != nil {
		var re *expr.RuntimeError
		if errors.As(err, &re) && re.Kind == "limit" {
			return "limit: " + err.Error()
		}
		return "error: " + err.Error()
	}
	out, err := expr.ToJSON(v, "")
	if err != nil {
		return "json error: " + err.Error()
	}
	return string(out)
}

type libCase struct{ src, want string }

func runLib(t *testing.T, cases []libCase) {
	t.Helper()
	vars := libVars(t)
	for _, tc := range cases {
		t.Run(tc.src, func(t *testing.T) {
			if got := evalLib(t, tc.src, vars, expr.DefaultBudget); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestLists(t *testing.T) {
	runLib(t, []libCase{
		{"len([1, 2, 3])", "3"}, {"len('中文ab')", "4"}, {"len({a: 1})", "1"}, {"[].len()", "0"},
		{"len(null)", "error: 1:1: len: expected a list, a string or an object, got null"},
		{"map([1, 2], (x, i) => x * 10 + i)", "[10,21]"},
		{"map(null, x => x)", "error: 1:1: map: argument 1 must be a list, got null"},
		{"map([1], 'x')", "error: 1:1: map: argument 2 must be a function such as x => x.name, got a string"},
		{"filter(rows, r => r.b == '一教').map(r => r.room)", `["101","102"]`},
		{"find(rows, r => r.cap == 30).room", `"205"`}, {"find(rows, r => false)", "null"},
		{"findIndex([5, 6, 7], x => x > 5)", "1"}, {"findIndex([], x => true)", "-1"},
		{"some([1, 2], x => x > 1)", "true"}, {"some([], x => true)", "false"},
		{"every([1, 2], x => x > 0)", "true"}, {"every([1, 2], x => x > 1)", "false"}, {"every([], x => false)", "true"},
		{"reduce([1, 2, 3], (a, x) => a + x, 10)", "16"}, {"reduce([1, 2, 3], (a, x) => a * x)", "6"},
		{"reduce(['a', 'b'], (a, x, i) => a + x + i, '')", `"a0b1"`},
		{"reduce([], (a, x) => a)", "error: 1:1: reduce: empty list and no initial value"},
		{"includes([1, [2], {a: 3}], {a: 3})", "true"}, {"includes([1], '1')", "false"}, {"'hello'.includes('ell')", "true"},
		{"indexOf(['a', 'b', 'a'], 'a')", "0"}, {"lastIndexOf(['a', 'b', 'a'], 'a')", "2"}, {"'中文中'.indexOf('文')", "1"},
		{"indexOf(1, 1)", "error: 1:1: indexOf: argument 1 must be a list or a string, got a number"},
		{"slice([1, 2, 3, 4], 1)", "[2,3,4]"}, {"slice([1, 2, 3, 4], 1, -1)", "[2,3]"}, {"slice([1, 2], -5, 9)", "[1,2]"},
		{"slice([1, 2, 3], 2, 1)", "[]"}, {"'北京大学'.slice(2)", `"大学"`}, {"'abcdef'.slice(-3, -1)", `"de"`},
		{"concat([1], [2, 3], 4)", "[1,2,3,4]"}, {"'a'.concat('b', 'c')", `"abc"`},
		{"'a'.concat(1)", "error: 1:5: concat: argument 2 must be a string, got a number"},
		{"join([1, null, 'x', true])", `"1,,x,true"`}, {"join(['a', 'b'], ' / ')", `"a / b"`},
		{"reverse([1, 2, 3])", "[3,2,1]"}, {"'abc'.reverse()", `"cba"`},
		{"sort([3, 1, 10, 2])", "[1,2,3,10]"}, {"sort(['b', 'a', 'C'])", `["C","a","b"]`},
		{"sort([2, 'a', null, 1, true])", `[1,2,"a",true,null]`},
		{"sort([1, 3, 2], (a, b) => b - a)", "[3,2,1]"},
		{"sort([{k: 1, n: 'a'}, {k: 0, n: 'b'}, {k: 1, n: 'c'}], (a, b) => a.k - b.k).map(x => x.n)", `["b","a","c"]`},
		{"sort([1, 2], (a, b) => 'x')", "error: 1:1: sort: the comparator must return a number, got a string"},
		{"sortBy(rows, 'room').map(r => r.room)", `["101","102","205","310"]`},
		{"sortBy(rows, r => num(r.cap), 'desc').map(r => r.room)", `["102","101","205","310"]`},
		{"sortBy(rows, r => num(r.cap)).map(r => r.room)", `["205","101","102","310"]`},
		{"sortBy(rows, 'b', 'up')", `error: 1:1: sortBy: argument 3 must be 'asc' or 'desc', got "up"`},
		{"sortBy(rows, 3)", "error: 1:1: sortBy: argument 2 must be a property name or a function, got a number"},
		{"groupBy(rows, 'b').keys()", `["一教","二教","三教"]`},
		{"groupBy([1, 2, 3, 4], x => x % 2 == 0 ? 'even' : 'odd')", `{"odd":[1,3],"even":[2,4]}`},
		{"groupBy([{k: null}, {k: 1}], 'k')", `{"null":[{"k":null}],"1":[{"k":1}]}`},
		{"uniq([1, '1', 1, [1], [1], null, null])", `[1,"1",[1],null]`},
		{"uniqBy(rows, 'b').map(r => r.room)", `["101","205","310"]`},
		{"uniq([{a: 1, b: [2]}, {b: [2], a: 1}, {a: 1}, true, false, true, -0, 0, 0/0, 0/0, 'x', 'x'])", `[{"a":1,"b":[2]},{"a":1},true,false,0,null,"x"]`},
		{"uniq([[1, [2]], [1, [2]], [[1], 2]])", "[[1,[2]],[[1],2]]"},
		{"sort([true, false, 'b', 'a', 2, 1, 0/0, null, [1], {}]).map(typeOf)", `["number","number","number","string","string","boolean","boolean","list","object","null"]`},
		{"sort([0/0, 1, 0/0, -1])", "[-1,1,null,null]"},
		{"sortBy([{k: 'b'}, {k: 1}, {k: null}, {k: true}, {k: 'a'}], 'k').map(x => x.k)", `[1,"a","b",true,null]`},
		{"flat([1, [2, [3, [4]]]])", "[1,2,[3,[4]]]"}, {"flat([1, [2, [3, [4]]]], 9)", "[1,2,3,4]"}, {"flat([])", "[]"},
		{"flatMap(rows, r => r.tags ?? [])", `["a","b","a"]`}, {"flatMap([1, 2], x => [x, [x]])", "[1,[1],2,[2]]"},
		{"sum([1, 2, 3.5])", "6.5"}, {"sum([])", "0"}, {"sum(rows, r => num(r.cap))", "210"}, {"sum([1, null, 2])", "3"},
		{"sum(['1'])", "error: 1:1: sum: item 0 is a string, not a number (use num(x) to read one)"},
		{"min([3, 1, 2])", "1"}, {"max([3, 1, 2])", "3"}, {"min(4, 2, 8)", "2"}, {"max([])", "null"},
		{"max(rows, r => num(r.cap))", "120"}, {"min(1, 'a')", "error: 1:1: min: argument 2 must be a number, got a string"},
		{"avg([1, 2, 3, 4])", "2.5"}, {"avg([])", "null"}, {"avg(rows, r => num(r.cap))", "70"},
		{"count(rows)", "4"}, {"count(rows, r => r.b == '一教')", "2"},
		{"take([1, 2, 3], 2)", "[1,2]"}, {"take([1], 5)", "[1]"}, {"take([1], -1)", "[]"},
		{"range(4)", "[0,1,2,3]"}, {"range(2, 5)", "[2,3,4]"}, {"range(10, 0, -3)", "[10,7,4,1]"}, {"range(0)", "[]"},
		{"range(5, 1)", "[]"}, {"range(0, 1, 0.25)", "[0,0.25,0.5,0.75]"},
		{"range(10001)", "limit: 1:1: range: 10001 items, the limit is 10000"},
		{"range(1, 2, 0)", "error: 1:1: range: the step (argument 3) must be a non-zero number, got 0"},
		{"range(1, 2, 0/0)", "error: 1:1: range: the step (argument 3) must be a non-zero number, got NaN"},
		{"range(0/0)", "error: 1:1: range: the count (argument 1) must be a number, got NaN"},
		{"range(0/0, 2)", "error: 1:1: range: the start (argument 1) must be a number, got NaN"},
		{"range(1, 0/0)", "error: 1:1: range: the end (argument 2) must be a number, got NaN"},
		{"zip([1, 2, 3], ['a', 'b'])", `[[1,"a"],[2,"b"]]`}, {"zip([1], [2], [3])", "[[1,2,3]]"},
		{"chunk([1, 2, 3, 4, 5], 2)", "[[1,2],[3,4],[5]]"}, {"chunk([], 3)", "[]"},
		{"chunk([1], 0)", "error: 1:1: chunk: the chunk size must be at least 1, got 0"},
		{"at([1, 2, 3], 0)", "1"}, {"at([1, 2, 3], -1)", "3"}, {"at([1], 5)", "null"}, {"'中文'.at(-1)", `"文"`},
		{"last([1, 2])", "2"}, {"last([])", "null"},
		// JavaScript method names, never mutating
		{"rows.map(r => r.room).sort().reverse()", `["310","205","102","101"]`},
		{"rows.filter(r => r.tags?.includes('a')).length", "2"},
		{"rows.some(r => r.cap == null)", "true"},
	})
}

func TestObjects(t *testing.T) {
	runLib(t, []libCase{
		{"keys({b: 1, a: 2})", `["b","a"]`}, {"values({b: 1, a: 2})", "[1,2]"},
		{"entries({b: 1, a: [2]})", `[["b",1],["a",[2]]]`}, {"keys([])", "error: 1:1: keys: argument 1 must be an object, got a list"},
		{"fromEntries([['a', 1], ['b', 2], [3, 4]])", `{"a":1,"b":2,"3":4}`},
		{"fromEntries(entries({x: 1}).map(e => [upper(e[0]), e[1] + 1]))", `{"X":2}`},
		{"fromEntries([1])", "error: 1:1: fromEntries: item 0 must be a [key, value] list, got a number"},
		{"pick({a: 1, b: 2, c: 3}, ['c', 'a', 'z'])", `{"c":3,"a":1}`}, {"pick({a: 1, b: 2}, 'b')", `{"b":2}`},
		{"omit({a: 1, b: 2, c: 3}, ['b'])", `{"a":1,"c":3}`}, {"omit({a: 1}, 'a', 'b')", "{}"},
		{"merge({a: 1, b: 1}, {b: 2, c: 2}, null, {a: 3})", `{"a":3,"b":2,"c":2}`},
		{"merge({}, [])", "error: 1:1: merge: argument 2 must be an object, got a list"},
		{"has({a: null}, 'a')", "true"}, {"has({a: 1}, 'b')", "false"}, {"has(null, 'a')", "false"},
		{"has({constructor: 1}, 'constructor')", "true"}, {"has({}, 'constructor')", "false"}, {"has({}, '__proto__')", "false"},
		{"get({a: {b: [5, {c: 6}]}}, 'a.b.1.c')", "6"}, {"get({a: {b: [5, 6]}}, 'a.b.-1')", "6"},
		{"get({a: 1}, 'a.b.c', 'def')", `"def"`}, {"get(null, 'a', 0)", "0"}, {"get({a: null}, 'a', 0)", "0"},
		{"get({a: [1]}, ['a', 0])", "1"}, {"get({'x.y': 1}, ['x.y'])", "1"},
		{"({ ...{a: 1}, b: 2 }).keys()", `["a","b"]`},
	})
}

func TestStrings(t *testing.T) {
	runLib(t, []libCase{
		{"str(null)", `""`}, {"'b' <= 'b'", "true"}, {"'a' >= 'b'", "false"}, {"'a' > 'B'", "true"}, {"str(12.50)", `"12.5"`}, {"str([1, 'a'])", `"[1,\"a\"]"`}, {"str(true)", `"true"`},
		{"trim('  x y \\n')", `"x y"`}, {"'\\t x '.trimStart()", `"x "`}, {"' x '.trimEnd()", `" x"`},
		{"lower('AbC')", `"abc"`}, {"upper('abc')", `"ABC"`}, {"'Ab'.toLowerCase()", `"ab"`}, {"'ab'.toUpperCase()", `"AB"`},
		{"trim(null)", "error: 1:1: trim: argument 1 must be a string, got null"},
		{"none?.trim()", "null"},
		{"split('a,b,,c', ',')", `["a","b","","c"]`}, {"split('a.b', '.')", `["a","b"]`}, {"split('中文', '')", `["中","文"]`},
		{"split('a b c', ' ', 2)", `["a","b"]`}, {"split('', ',')", `[""]`},
		{"replace('2024-01-02', '(\\d+)-(\\d+)-(\\d+)', '$3/$2/$1')", `"02/01/2024"`},
		{"replace('a1b22', '\\d', '#')", `"a#b##"`},
		{"replaceAll('aaa', 'a', '$&$&')", `"aaaaaa"`},
		{"replace('x', 'x', '$$1 $9 $')", `"$1 $9 $"`},
		{"replace('ab', '(?<first>a)', '[$<first>]')", `"[a]b"`},
		{"replace('a1b2', '\\d', d => num(d) * 2)", `"a2b4"`},
		{"replace('Room 101', '(?i)room (\\d+)', (m, n) => n)", `"101"`},
		{"replace('x', '(', '')", "check error: 1:14: replace: invalid regex: missing closing ): `(`"},
		{"replace('x', '(' + '', '')", "error: 1:1: replace: invalid regex: missing closing ): `(`"},
		{"replace('x', 'x(?=y)', '')", "check error: 1:16: replace: look-ahead '(?=' at offset 1 is not supported (regexes are RE2: no look-around)"},
		{"match('Room 101, 2F', '(\\d+)')", `["101","101"]`}, {"match('abc', '\\d')", "null"},
		{"match('ab', '(a)(x)?')", `["a","a",null]`},
		{"matchAll('a1b22c333', '[a-z](\\d+)')", `[["a1","1"],["b22","22"],["c333","333"]]`}, {"matchAll('x', '\\d')", "[]"},
		{"test('YanYuan', '(?i)^yanyuan')", "true"}, {"test('abc', '^b')", "false"}, {"'a\\nb'.test('(?m)^b$')", "true"},
		{"'a\\nb'.test('(?s)a.b')", "true"}, {"test('中', '(?u)\\p{Han}')", "true"},
		{"test('aa', '(a)\\1')", "check error: 1:16: test: back-reference '\\1' at offset 3 is not supported (regexes are RE2: no back-references)"},
		{"test('a', '[')", "check error: 1:11: test: invalid regex: missing closing ]: `[`"},
		{"startsWith('pku.edu.cn', 'pku')", "true"}, {"'pku.edu.cn'.endsWith('.cn')", "true"}, {"'x'.startsWith('xy')", "false"},
		{"padStart('7', 3, '0')", `"007"`}, {"padEnd('ab', 5, '.-')", `"ab.-."`}, {"padStart('abc', 2)", `"abc"`}, {"'中'.padStart(3)", `"  中"`},
		{"padStart('x', 1000000000)", "limit: 1:1: padStart: length 1000000000 would build more than 1048576 bytes"},
		{"repeat('ab', 3)", `"ababab"`}, {"repeat('x', 0)", `""`},
		{"repeat('x', 1001)", "limit: 1:1: repeat: count 1001, the limit is 1000"},
		{"repeat('x', -1)", "error: 1:1: repeat: the count must be 0 or more, got -1"},
		{"repeat(repeat('xx', 1000), 1000)", "limit: 1:1: repeat: the result would be 2000000 bytes, the limit is 1048576"},
		{"substring('abcdef', 4, 1)", `"bcd"`}, {"substring('abc', -2)", `"abc"`},
	})
}

func TestNumbers(t *testing.T) {
	runLib(t, []libCase{
		{"num(3)", "3"}, {"num('42')", "42"}, {"num(' 1,234.50 ')", "1234.5"}, {"num('¥1,234元')", "1234"},
		{"num('￥ 88')", "88"}, {"num('$-5.5')", "-5.5"}, {"num('-¥5')", "-5"}, {"num('60人')", "60"}, {"num('35%')", "35"},
		{"num('1,2')", "1"}, {"num('12,345,678')", "12345678"}, {"num('1234,567')", "1234"}, {"num('.5kg')", "0.5"},
		{"num('1e3')", "1000"}, {"num('3e')", "3"}, {"num('+7')", "7"},
		{"num('约60人')", "null"}, {"num('abc', 0)", "0"}, {"num('', -1)", "-1"}, {"num(null)", "null"}, {"num(null, 0)", "0"},
		{"num(true, 0)", "0"}, {"num([1])", "null"}, {"'12元'.num()", "12"},
		{"int('7.9人')", "7"}, {"int('-7.9')", "-7"}, {"int('x', 0)", "0"}, {"int(2.5)", "2"},
		{"round(2.5)", "3"}, {"round(-2.5)", "-2"}, {"round(1.005, 2)", "1.01"}, {"round(1234.5678, -2)", "1200"},
		{"round(3.14159, 3)", "3.142"}, {"round('1')", "error: 1:1: round: argument 1 must be a number, got a string"},
		{"floor(-1.5)", "-2"}, {"ceil(1.2)", "2"}, {"abs(-3)", "3"},
		{"clamp(15, 0, 10)", "10"}, {"clamp(-1, 0, 10)", "0"}, {"clamp(5, 0, 10)", "5"},
		{"clamp(1, 10, 0)", "error: 1:1: clamp: lo (10) is greater than hi (0)"},
		{"fixed(3.14159, 2)", `"3.14"`}, {"fixed(2, 1)", `"2.0"`}, {"fixed(-0.001, 2)", `"0.00"`}, {"fixed(1.5, 0)", `"2"`},
		{"fixed(1, 21)", "error: 1:1: fixed: digits must be between 0 and 20, got 21"},
	})
}

func TestTypes(t *testing.T) {
	runLib(t, []libCase{
		{"[isList([]), isList({}), isObject({}), isObject([]), isString(''), isNumber(0), isBool(false), isNull(null), isNull(0)]",
			"[true,false,true,false,true,true,true,true,false]"},
		{"[null, true, 1, 's', [], {}].map(typeOf)", `["null","boolean","number","string","list","object"]`},
		{"typeOf(html('<p>'))", `"node"`}, {"typeOf(x => x)", `"function"`},
	})
}

func TestURLs(t *testing.T) {
	runLib(t, []libCase{
		{"url('https://a.pku.edu.cn/x/y?z=1', '../q')", `"https://a.pku.edu.cn/q"`},
		{"url('https://a.pku.edu.cn/x/', 'b c')", `"https://a.pku.edu.cn/x/b%20c"`},
		{"url('https://h.cn/p', null, {q: '二教 a&b', n: 2, skip: null, many: [1, 2]})", `"https://h.cn/p?q=%E4%BA%8C%E6%95%99%20a%26b&n=2&many=1&many=2"`},
		{"url('https://h.cn/p?x=1#frag', '', {y: 2})", `"https://h.cn/p?x=1&y=2"`},
		{"url('https://h.cn/p?x=1', '?k=v', {y: 2})", `"https://h.cn/p?k=v&y=2"`},
		{"url('https://h.cn/p#top', null, {y: 2})", `"https://h.cn/p?y=2#top"`},
		{"url('https://h.cn', '//other.cn/a')", `"https://other.cn/a"`},
		{"url(':bad')", "error: 1:1: url: bad base URL \":bad\": missing protocol scheme"},
		{"parseUrl('https://h.cn:8443/a/b?x=1&y=%E4%B8%AD&x=2&flag')", `{"scheme":"https","host":"h.cn:8443","path":"/a/b","query":{"x":["1","2"],"y":"中","flag":""}}`},
		{"parseUrl('/relative?a=b').path", `"/relative"`},
		{"queryString({b: 'x y', a: 1, z: null, t: true})", `"b=x%20y&a=1&t=true"`}, {"queryString({})", `""`},
		{"encode(\"a b&c/d?e=中!'()*~\")", `"a%20b%26c%2Fd%3Fe%3D%E4%B8%AD!'()*~"`}, {"encode(12)", `"12"`},
		{"decode('a%20b%E4%B8%AD+')", `"a b中+"`},
		{"decode('%E4%B8')", `error: 1:1: decode: malformed percent-encoding in "%E4%B8"`},
		{"decode('%zz')", `error: 1:1: decode: malformed percent-encoding in "%zz"`},
	})
}

func TestJSONText(t *testing.T) {
	runLib(t, []libCase{
		{"json('{\"z\": 1, \"a\": [true, null]}')", `{"z":1,"a":[true,null]}`},
		{"json('\\ufeff[1]')", "[1]"},
		{"json('{\"a\": }')", "error: 1:1: json: 1:7: unexpected '}'"},
		{"toJson({a: [1, 'x'], b: null})", `"{\"a\":[1,\"x\"],\"b\":null}"`},
		{"toJson({a: [1]}, 2)", `"{\n  \"a\": [\n    1\n  ]\n}"`}, {"toJson([1], '\\t')", `"[\n\t1\n]"`},
		{"toJson(html('<p>x</p>'))", "error: 1:1: toJson: an HTML node cannot be part of a result; use htmlText(...) or attr(...) to read text from it"},
		{"base64('PKU 北大')", `"UEtVIOWMl+Wkpw=="`}, {"unbase64('UEtVIOWMl+Wkpw==')", `"PKU 北大"`}, {"unbase64('UEtVIOWMl-Wkpw')", `"PKU 北大"`},
		{"unbase64('!!')", "error: 1:1: unbase64: invalid base64: illegal base64 data at input byte 0"},
		{"unbase64('/w==')", "error: 1:1: unbase64: the decoded bytes are not UTF-8 text"},
	})
}

// Every function charges before its work: a single call cannot run far past the budget.
func TestBudgetExhaustion(t *testing.T) {
	vars := libVars(t)
	big := make([]any, 20_000)
	for i := range big {
		big[i] = float64(i)
	}
	vars["big"] = big
	for _, src := range []string{
		"range(10000).map(x => range(10000))",
		"range(10000).sort((a, b) => b - a)",
		"range(10000).map(x => repeat('abcdefghij', 1000)).join('')",
		"range(10000).map(x => x).concat(range(10000), range(10000)).sortBy(x => -x)",
		"range(10000).reduce((a, x) => a.concat([x]), [])",
		"range(10000).map(x => 'x').join('').split('').map(c => c + c).groupBy(c => c)",
		"range(100).map(x => big == big)",          // deep equality costs what it visits
		"range(100).map(x => [big].includes(big))", // so does includes
		"range(100).map(x => [big, big, big, big, big].uniq())",
	} {
		got := evalLib(t, src, vars, 50_000)
		if !strings.HasPrefix(got, "limit: ") || !strings.HasSuffix(got, "expression budget exceeded (50000 operations)") {
			t.Errorf("%s: got %.200s", src, got)
		}
	}
}

// A regex scan is charged for the text times the pattern before it runs: here the charge alone
// is over the budget, so the slow scan never starts.
func TestRegexCost(t *testing.T) {
	src := "test(repeat(repeat('a', 64), 1000), repeat('(a|b)', 150) + 'c')"
	start := time.Now()
	got := evalLib(t, src, libVars(t), 2_000)
	if got != "limit: 1:1: expression budget exceeded (2000 operations)" {
		t.Errorf("got %s", got)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v: the scan ran before the charge", d)
	}
	if got := evalLib(t, "test(repeat(repeat('a', 64), 1000), 'a+c')", libVars(t), 2_000); got != "false" {
		t.Errorf("a short pattern over 64 KB: %s", got)
	}
}

// TestGolden evaluates longer expressions whose results are kept in testdata/golden/*.json
// (regenerate with -update).
func TestGolden(t *testing.T) {
	vars := libVars(t)
	cases := map[string]string{
		"classrooms": "rows.map(r => ({ room: r.room, seats: num(r.cap, 0), building: r.b })).filter(r => r.seats > 0).sortBy('seats', 'desc')",
		"groups":     "groupBy(rows, 'b')",
		"summary":    "({ total: count(rows), seats: sum(rows, r => num(r.cap)), byBuilding: entries(groupBy(rows, 'b')).map(e => ({ building: e[0], rooms: e[1].map(r => r.room).join('、') })) })",
		"pages":      "chunk(range(1, 11), 4).map((p, i) => ({ page: i + 1, url: url('https://h.pku.edu.cn/list', null, { page: i + 1, size: len(p) }) }))",
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			env := NewEnv()
			x, err := env.Parse(src)
			if err != nil {
				t.Fatal(err)
			}
			v, err := x.Eval(context.Background(), vars, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := expr.ToJSON(v, "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append([]byte("// "+src+"\n"), got...)
			got = append(got, '\n')
			path := filepath.Join("testdata", "golden", name+".json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if string(got) != string(want) {
				t.Errorf("%s differs from the golden file:\n%s\nwant:\n%s", name, got, want)
			}
		})
	}
}
