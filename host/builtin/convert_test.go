package builtin

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/pkuinfo/harness/lang/expr"
)

type convInner struct {
	A int    `json:"a"`
	B string `json:"b,omitempty"`
}

type convAll struct {
	S     string            `json:"s"`
	Empty string            `json:"empty,omitempty"`
	I     int64             `json:"i"`
	U     uint8             `json:"u"`
	F     float64           `json:"f"`
	Bool  bool              `json:"bool,omitempty"`
	P     *int              `json:"p"`
	PNil  *int              `json:"pNil"`
	L     []string          `json:"l"`
	LNil  []int             `json:"lNil"`
	LOmit []int             `json:"lOmit,omitempty"`
	M     map[string]int    `json:"m"`
	In    convInner         `json:"in"`
	InP   *convInner        `json:"inP,omitempty"`
	Any   any               `json:"any"`
	T     time.Time         `json:"t"`
	Bytes []byte            `json:"bytes"`
	Arr   [2]int            `json:"arr,omitempty"`
	Skip  string            `json:"-"`
	NoTag string            // no tag: the field name is the key
	Raw   json.RawMessage   `json:"raw"`
	MM    map[string]any    `json:"mm"`
	Nest  [][]convInner     `json:"nest"`
	Keys  map[string]string `json:"keys,omitempty"`
}

// TestEncodeLikeJSON: a result reads as its encoding/json text would.
func TestEncodeLikeJSON(t *testing.T) {
	seven := 7
	values := []any{
		convAll{},
		convAll{S: "高数", I: -3, U: 200, F: 1.5, Bool: true, P: &seven, L: []string{"a"}, LOmit: []int{1},
			M: map[string]int{"z": 1, "a": 2}, In: convInner{A: 1, B: "x"}, InP: &convInner{}, Any: map[string]any{"k": []any{1.0, "v"}},
			T: time.Date(2026, 10, 21, 9, 0, 0, 0, time.UTC), Bytes: []byte("hi"), Arr: [2]int{0, 0}, Skip: "no", NoTag: "yes",
			Raw: json.RawMessage(`{"r":1}`), MM: map[string]any{"n": nil}, Nest: [][]convInner{{{A: 2}}}},
		[]int(nil), map[string]bool{}, 3, "s", true, &seven,
	}
	for i, v := range values {
		got, err := toValue(v)
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		b, _ := json.Marshal(v)
		want, err := expr.FromJSON(b)
		if err != nil {
			t.Fatal(err)
		}
		gj, _ := expr.ToJSON(got, "")
		wj, _ := expr.ToJSON(want, "")
		if string(gj) != string(wj) {
			t.Errorf("%d:\n got %s\nwant %s", i, gj, wj)
		}
	}
	if _, err := toValue(struct{ F float64 }{F: nan()}); err == nil {
		t.Error("NaN encoded")
	}
}

func nan() float64 { var z float64; return z / z }

// TestDecodeLikeJSON: the validated input lands in the struct as
// encoding/json would put its JSON there.
func TestDecodeLikeJSON(t *testing.T) {
	src := `{"s":"高数","i":-3,"u":200,"f":1.5,"bool":true,"p":7,"pNil":null,"l":["a"],"m":{"a":2},"in":{"a":1,"b":"x"},
"inP":{"a":0},"any":{"k":[1,"v"]},"nest":[[{"a":2}]],"NoTag":"yes"}`
	x, err := expr.FromJSON([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got, want convAll
	if err := decodeInto(x, reflect.ValueOf(&got).Elem(), "input"); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(src), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("\n got %+v\nwant %+v", got, want)
	}
	for _, bad := range []string{`{"i":1.5}`, `{"u":-1}`, `{"s":3}`, `{"l":"a"}`, `{"in":[]}`, `{"bool":"yes"}`,
		// Out of range: int64(1e300) is not an int64, and 2^64 wraps a uint64.
		`{"i":1e300}`, `{"i":-1e300}`, `{"i":9223372036854775808}`, `{"u":1e300}`, `{"u":18446744073709551616}`} {
		x, _ := expr.FromJSON([]byte(bad))
		var v convAll
		if err := decodeInto(x, reflect.ValueOf(&v).Elem(), "input"); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
}
