package client

import (
	"math/rand/v2"
	"time"
)

// Backoff paces reconnects: attempt n (0-based) waits a random time in [d/2, d] where
// d = min(Max, Min × 2ⁿ) — exponential growth with “equal jitter”, so a server restart does not
// bring every device back in the same millisecond, yet no wait is shorter than half the step.
type Backoff struct {
	Min time.Duration // first step; must be > 0
	Max time.Duration // cap on the step; must be ≥ Min
}

// DefaultBackoff starts at 250 ms and caps at 30 s.
var DefaultBackoff = Backoff{Min: 250 * time.Millisecond, Max: 30 * time.Second}

// Delay is the wait before attempt n (0-based), with jitter drawn from rnd (a float64 in
// [0, 1); nil means math/rand/v2).
func (b Backoff) Delay(n int, rnd func() float64) time.Duration {
	if b.Min <= 0 {
		b = DefaultBackoff
	}
	if b.Max < b.Min {
		b.Max = b.Min
	}
	d := b.Min
	for i := 0; i < n && d < b.Max; i++ {
		d *= 2
	}
	d = min(d, b.Max)
	if rnd == nil {
		rnd = rand.Float64
	}
	half := d / 2
	return half + time.Duration(rnd()*float64(d-half))
}
