package stdlib

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortNumberKeys checks sortBy's fast order for number keys against the general stable
// sort on random lists of few distinct numbers (many ties), -0 and 0, and nulls, both ways;
// and that a NaN or a key of another kind leaves the list to the general sort.
func TestSortNumberKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		n := r.IntN(60)
		keys := make([]any, n)
		for i := range keys {
			switch x := r.IntN(8); x {
			case 0:
				keys[i] = nil
			case 1:
				keys[i] = negZero()
			default:
				keys[i] = float64(x - 4)
			}
		}
		for _, desc := range []bool{false, true} {
			got, ok := sortNumberKeys(keys, desc)
			if !ok {
				t.Fatalf("trial %d: number keys were refused", trial)
			}
			want, _ := stableSort(n, func(i, j int) (bool, error) {
				a, b := keys[i], keys[j]
				if a == nil || b == nil {
					return a != nil && b == nil, nil
				}
				if desc {
					a, b = b, a
				}
				return compareValues(a, b) < 0, nil
			})
			if !slices.Equal(got, want) {
				t.Fatalf("trial %d desc=%v: keys %v sorted to %v, want %v", trial, desc, keys, got, want)
			}
		}
	}
	nan := 0.0
	for _, keys := range [][]any{{1.0, nan / nan}, {1.0, "a"}, {true}} {
		if _, ok := sortNumberKeys(keys, false); ok {
			t.Errorf("keys %v took the number path", keys)
		}
	}
}

func negZero() float64 {
	z := 0.0
	return -z
}
