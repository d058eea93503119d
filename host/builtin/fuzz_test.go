package builtin

import (
	"reflect"
	"strings"
	"testing"
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
