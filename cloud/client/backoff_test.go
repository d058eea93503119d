package client

import (
	"testing"
	"time"
)

func TestBackoffDelay(t *testing.T) {
	b := Backoff{Min: 100 * time.Millisecond, Max: time.Second}
	tests := []struct {
		attempt int
		rnd     float64
		want    time.Duration
	}{
		{0, 0, 50 * time.Millisecond},
		{0, 0.999999, 99999950 * time.Nanosecond},
		{1, 0, 100 * time.Millisecond},
		{2, 0.5, 300 * time.Millisecond},
		{3, 0, 400 * time.Millisecond},
		{4, 0, 500 * time.Millisecond}, // capped at Max = 1 s
		{50, 1, time.Second},
		{1 << 30, 0.5, 750 * time.Millisecond}, // no overflow
	}
	for _, tc := range tests {
		got := b.Delay(tc.attempt, func() float64 { return tc.rnd })
		if got != tc.want {
			t.Errorf("Delay(%d, %v) = %v, want %v", tc.attempt, tc.rnd, got, tc.want)
		}
	}
	// Jitter spreads the waits: 1,000 draws of attempt 3 are not all equal and stay in [d/2, d].
	seen := map[time.Duration]bool{}
	for range 1000 {
		d := b.Delay(3, nil)
		if d < 400*time.Millisecond || d > 800*time.Millisecond {
			t.Fatalf("Delay(3) = %v, outside [400ms, 800ms]", d)
		}
		seen[d] = true
	}
	if len(seen) < 100 {
		t.Errorf("only %d distinct delays in 1000 draws", len(seen))
	}
	if got := (Backoff{}).Delay(0, func() float64 { return 0 }); got != DefaultBackoff.Min/2 {
		t.Errorf("zero Backoff Delay(0) = %v, want %v", got, DefaultBackoff.Min/2)
	}
}
