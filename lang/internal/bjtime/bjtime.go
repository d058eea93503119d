// Package bjtime reads, formats and does arithmetic on dates in Beijing time, the only time zone
// of the plugin language (docs/DECISIONS.md §5 "Dates" and §10 "Dates").
//
// A date is a Unix time in milliseconds (int64). Beijing time is the fixed offset UTC+8 built with
// time.FixedZone: China has had no daylight saving since 1991, and a fixed zone keeps results
// independent of the host's tz database. The package is pure Go and knows nothing of the
// expression language; lang/stdlib wraps it as the builtins date, formatDate, dateParts and so on.
package bjtime

import (
	"math"
	"time"
)

// Zone is Beijing time: UTC+8, no daylight saving (docs/DECISIONS.md §5).
var Zone = time.FixedZone("CST", 8*60*60)

const (
	// MinuteMs is the length of a minute in milliseconds.
	MinuteMs = 60 * 1000
	// HourMs is the length of an hour in milliseconds.
	HourMs = 60 * MinuteMs
	// DayMs is the length of a day in milliseconds (Beijing has no daylight saving).
	DayMs = 24 * HourMs

	offsetMs = 8 * HourMs

	// MaxMs is the largest magnitude a date may have: ±8.64e15 ms (±100,000,000 days from 1970),
	// the range of a JavaScript Date. Dates outside it are invalid.
	MaxMs = 8_640_000_000_000_000

	// secondsBelow is the threshold of docs/DECISIONS.md §5: a number whose magnitude is below 10^11
	// is a Unix time in seconds, otherwise in milliseconds.
	secondsBelow = 1e11
)

// InRange reports whether ms lies within ±MaxMs.
func InRange(ms int64) bool { return ms >= -MaxMs && ms <= MaxMs }

// FromNumber reads a number as a date (docs/DECISIONS.md §5): Unix milliseconds, or Unix seconds
// when its magnitude is below 10^11. Fractions of a millisecond are dropped (rounded down).
// It returns false for NaN, ±Inf and dates outside ±MaxMs.
func FromNumber(f float64) (int64, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	if math.Abs(f) < secondsBelow {
		f *= 1000
	}
	f = math.Floor(f)
	if f < -MaxMs || f > MaxMs {
		return 0, false
	}
	return int64(f), true
}

// Time converts Unix ms to a time.Time in Zone.
func Time(ms int64) time.Time { return time.UnixMilli(ms).In(Zone) }

// Parts is a date split into its Beijing-time fields, as dateParts returns them (docs/DECISIONS.md
// §5): Month 1–12, Day 1–31, Hour 0–23, Weekday 1 = Monday … 7 = Sunday.
type Parts struct {
	Year, Month, Day, Hour, Minute, Second, Weekday int
}

// PartsOf splits ms into its Beijing-time fields.
func PartsOf(ms int64) Parts {
	t := Time(ms)
	wd := int(t.Weekday())
	if wd == 0 {
		wd = 7
	}
	return Parts{
		Year: t.Year(), Month: int(t.Month()), Day: t.Day(),
		Hour: t.Hour(), Minute: t.Minute(), Second: t.Second(), Weekday: wd,
	}
}

// floorDiv divides rounding toward negative infinity.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// dayNumber is the number of Beijing calendar days since 1970-01-01 (Beijing).
func dayNumber(ms int64) int64 { return floorDiv(ms+offsetMs, DayMs) }

// StartOfDay returns midnight (00:00:00.000 Beijing time) of the day that contains ms.
func StartOfDay(ms int64) int64 { return dayNumber(ms)*DayMs - offsetMs }

// DiffDays returns the number of Beijing calendar days from a to b: positive when b is on a later
// day, 0 on the same day, whatever the times of day (docs/DECISIONS.md §10 "Dates").
func DiffDays(a, b int64) int64 { return dayNumber(b) - dayNumber(a) }

// DiffMinutes returns (b − a) in whole minutes, truncated toward zero (docs/DECISIONS.md §10).
func DiffMinutes(a, b int64) int64 { return (b - a) / MinuteMs }

// fromFields builds a Beijing-time date after checking every field's range; day must exist in
// its month (no normalisation of 2月30日 to March).
func fromFields(year, month, day, hour, minute, second, milli int) (int64, bool) {
	if month < 1 || month > 12 || day < 1 || day > daysIn(year, month) ||
		hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59 ||
		milli < 0 || milli > 999 {
		return 0, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, second, milli*int(time.Millisecond), Zone)
	return t.UnixMilli(), true
}

// daysIn returns the number of days of a month in the proleptic Gregorian calendar.
func daysIn(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
