package safefs

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestReadGrows checks the cap when a file holds more than its size said
// (it grew after stat, or its file system reports no size).
func TestReadGrows(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		data      string
		size, max int64
		ok        bool
	}{
		{"0123456789", 0, 10, true},
		{"0123456789", 3, 10, true},
		{"0123456789", 0, 9, false},
		{"0123456789", 5, 9, false},
		{strings.Repeat("x", 3*chunk), 0, 3 * chunk, true},
		{strings.Repeat("x", 3*chunk+1), 0, 3 * chunk, false},
	} {
		b, err := read(ctx, strings.NewReader(tc.data), tc.size, "f", tc.max)
		if tc.ok && (err != nil || string(b) != tc.data) {
			t.Errorf("%d bytes, size %d, max %d: %d bytes, %v", len(tc.data), tc.size, tc.max, len(b), err)
		}
		if !tc.ok && !errors.Is(err, ErrTooLarge) {
			t.Errorf("%d bytes, size %d, max %d: err = %v, want ErrTooLarge", len(tc.data), tc.size, tc.max, err)
		}
	}
}
