package server

import "testing"

// retryAfter must name a time at which allow really passes again, and no later than needed
// (checked at whole seconds): POST /send's Retry-After used to be 1 s even when the budget was
// spent for the rest of the minute.
func TestFrameRateRetryAfter(t *testing.T) {
	tests := []struct {
		name   string
		perMin int
		sends  []int64 // ms of frames sent (all allowed or not, in order)
		now    int64
		want   int64
	}{
		{"full minute at its start", 60, burst(0, 60), 100, 60},
		{"full minute late in it", 60, burst(50_000, 60), 55_000, 6},
		{"previous minute still weighs", 60, append(burst(0, 60), burst(90_000, 30)...), 90_000, 1},
		{"two per minute", 2, []int64{0, 10_000}, 20_000, 41},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var f frameRate
			f.start = 0
			for _, at := range tc.sends {
				f.allow(at, tc.perMin)
			}
			probe := f
			if probe.allow(tc.now, tc.perMin) {
				t.Fatalf("a frame at %d ms is allowed; the case is wrong", tc.now)
			}
			got := f.retryAfter(tc.now, tc.perMin)
			if got != tc.want {
				t.Errorf("retryAfter = %d s, want %d", got, tc.want)
			}
			later := f
			if !later.allow(tc.now+got*1000, tc.perMin) {
				t.Errorf("a frame %d s later is still refused", got)
			}
			if got > 1 {
				earlier := f
				if earlier.allow(tc.now+(got-1)*1000, tc.perMin) {
					t.Errorf("a frame %d s later is already allowed", got-1)
				}
			}
		})
	}
}

func burst(at int64, n int) []int64 {
	s := make([]int64, n)
	for i := range s {
		s[i] = at
	}
	return s
}
