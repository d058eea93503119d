package i18n

import (
	"strconv"
	"time"
)

// Beijing is the campus's time zone, UTC+8 without daylight saving (a
// fixed zone, so no tz database is needed).
var Beijing = time.FixedZone("CST", 8*3600)

// Plural is the seed's plural(n, one) for English: "1 book", "3 books",
// "0 books". other is the plural form; pass "" to add "s" to one.
func Plural(n int, one, other string) string {
	if other == "" {
		other = one + "s"
	}
	if n == 1 || n == -1 {
		return strconv.Itoa(n) + " " + one
	}
	return strconv.Itoa(n) + " " + other
}
