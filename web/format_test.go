package web

import (
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/pkuinfo/harness/i18n"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata golden files")

// formatCase is one row of testdata/format.golden.json: an instant and a
// "now" in Unix ms, and what package i18n makes of them in one language.
type formatCase struct {
	T             int64  `json:"t"`
	Now           int64  `json:"now"`
	Lang          string `json:"lang"`
	Clock         string `json:"clock"`
	Weekday       string `json:"weekday"`
	LocalDate     string `json:"localDate"`
	LocalDateTime string `json:"localDateTime"`
	Day           string `json:"day"`
	Relative      string `json:"relative"`
	Countdown     string `json:"countdown"` // FormatCountdown(t - now)
}

// formatTable is the instants the web app's formatters (src/format.ts) are
// checked on: edges of minutes, hours, Beijing midnights, weeks and years,
// both directions, and a spread of pseudo-random ones.
func formatTable() []formatCase {
	bj := i18n.Beijing
	nows := []time.Time{
		time.Date(2026, 10, 18, 21, 4, 30, 0, bj),
		time.Date(2026, 12, 31, 23, 59, 0, 0, bj), // the year turns within the minute
		time.Date(2027, 1, 1, 0, 0, 30, 0, bj),
		time.Date(2026, 3, 1, 0, 1, 0, 0, bj),
		time.Date(2026, 10, 18, 7, 30, 0, 0, time.UTC), // 15:30 Beijing
	}
	offsets := []time.Duration{0, time.Second, 59 * time.Second, time.Minute, 61 * time.Second, 59*time.Minute + 59*time.Second,
		time.Hour, 2*time.Hour + 10*time.Minute, 5 * time.Hour, 23 * time.Hour, 24 * time.Hour, 25 * time.Hour, 47 * time.Hour,
		3 * 24 * time.Hour, 6 * 24 * time.Hour, 6*24*time.Hour + 23*time.Hour, 7 * 24 * time.Hour, 8 * 24 * time.Hour,
		40 * 24 * time.Hour, 400 * 24 * time.Hour}
	var out []formatCase
	add := func(tm, now time.Time) {
		for _, l := range []i18n.Locale{i18n.Zh, i18n.En} {
			out = append(out, formatCase{
				T: tm.UnixMilli(), Now: now.UnixMilli(), Lang: string(l),
				Clock: i18n.FormatClock(tm), Weekday: i18n.FormatWeekday(tm, l), LocalDate: i18n.FormatLocalDate(tm, l),
				LocalDateTime: i18n.FormatLocalDateTime(tm, l), Day: i18n.FormatDay(tm, now, l),
				Relative: i18n.FormatRelative(tm, now, l), Countdown: i18n.FormatCountdown(tm.Sub(now), l),
			})
		}
	}
	for _, now := range nows {
		now = now.Truncate(time.Millisecond)
		for _, d := range offsets {
			add(now.Add(d), now)
			if d != 0 {
				add(now.Add(-d), now)
			}
		}
	}
	// A fixed linear congruential sequence: reproducible, spread over two years.
	x := uint64(20261018)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, bj)
	for range 60 {
		x = x*6364136223846793005 + 1442695040888963407
		now := base.Add(time.Duration(x>>40) * time.Second)
		x = x*6364136223846793005 + 1442695040888963407
		d := time.Duration(int64(x>>34)-(1<<29)) * time.Millisecond * 20
		add(now.Add(d), now)
	}
	return out
}

// TestFormatGolden keeps testdata/format.golden.json equal to what package
// i18n gives (go test ./web -run TestFormatGolden -update rewrites it).
func TestFormatGolden(t *testing.T) {
	got, err := json.MarshalIndent(formatTable(), "", " ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "format.golden.json")
	if *updateGolden {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != string(got) {
		t.Errorf("%s differs from package i18n's formatters; run go test ./web -run TestFormatGolden -update", path)
	}
}

// TestWebFormatterMatchesGo runs format.check.mjs (npm test): src/format.ts
// on every row of the golden table must give package i18n's strings. It
// needs node and web/node_modules (npm ci); without them it is skipped.
func TestWebFormatterMatchesGo(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	if _, err := os.Stat(filepath.Join("node_modules", "esbuild")); err != nil {
		t.Skip("web/node_modules is missing: run npm ci in web/")
	}
	out, err := exec.Command(node, "format.check.mjs").CombinedOutput()
	if err != nil {
		t.Fatalf("node format.check.mjs: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
