package genui

import (
	"reflect"
	"testing"
)

// TestStringOffsets maps decoded bytes of a JSON string back to source offsets: plain bytes,
// two-byte escapes, \u escapes (one rune, several UTF-8 bytes) and surrogate pairs.
func TestStringOffsets(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want []int
	}{
		{"plain", `"ab"`, []int{1, 2, 3}},
		{"escape", `"a\"b"`, []int{1, 2, 4, 5}},
		{"unicode escape", `"\u4e2dx"`, []int{1, 1, 1, 7, 8}},
		{"surrogate pair", `"\ud83d\ude00x"`, []int{1, 1, 1, 1, 13, 14}},
		{"raw multibyte", `"中x"`, []int{1, 2, 3, 4, 5}},
		{"not a string", `12`, nil},
		{"unterminated", `"ab`, nil},
		{"bad hex", `"\u12zz"`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := stringOffsets([]byte(tc.src), 0); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("stringOffsets(%s) = %v, want %v", tc.src, got, tc.want)
			}
		})
	}
}

func TestSplitTemplate(t *testing.T) {
	cases := []struct {
		src    string
		exprs  []string
		single bool
		issues int
	}{
		{"plain", nil, false, 0},
		{"${a}", []string{"a"}, true, 0},
		{" ${a}", []string{"a"}, false, 0},
		{"${a} ${b}", []string{"a", "b"}, false, 0},
		{"$${a}", nil, false, 0},
		{"${ {x: '}'}.x }", []string{" {x: '}'}.x "}, true, 0},
		{"${`a${b}c`}", []string{"`a${b}c`"}, true, 0},
		{"${a /* } */ + b}", []string{"a /* } */ + b"}, true, 0},
		{"${a", nil, false, 1},
		{"${}", []string{""}, true, 1},
	}
	for _, tc := range cases {
		segs, single, issues := splitTemplate(tc.src)
		var exprs []string
		for _, s := range segs {
			exprs = append(exprs, s.expr)
		}
		if !reflect.DeepEqual(exprs, tc.exprs) || single != tc.single || len(issues) != tc.issues {
			t.Errorf("splitTemplate(%q) = %q, %v, %v; want %q, %v, %d issues", tc.src, exprs, single, issues, tc.exprs, tc.single, tc.issues)
		}
	}
}
