// Package i18n holds what both languages of the app share (seed 003
// "多语言"): the two locales, the date, time and number formatters every
// built-in plugin, the web app and genui templates use instead of the
// platform's own (formatClock, formatWeekday, formatLocalDate,
// formatLocalDateTime, formatRelative, formatDay, formatCountdown, plural),
// and the English copy rules checked for built-ins (a test) and for
// documents' i18n.en (validator warnings). Times are read in Beijing time
// (Asia/Shanghai, UTC+8, no daylight saving), the campus's clock.
package i18n
