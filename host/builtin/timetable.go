package builtin

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pkuinfo/harness/i18n"
	"github.com/pkuinfo/harness/plugin"
)

// The timetable plugin: the tool face of the timetable ability (one table,
// migration 102), with PKU's class periods and the week of term.

//go:embed ui/timetable/today.json
var timetableWidget []byte

//go:embed ui/timetable/main.json
var timetableScreen []byte

// Period is one of PKU's class periods (节次), Beijing wall clock.
type Period struct{ Start, End string }

// Periods are PKU's twelve class periods (1 = 08:00–08:50 … 12 = 20:40–21:30),
// the times the classrooms plugin uses too.
var Periods = [12]Period{
	{"08:00", "08:50"}, {"09:00", "09:50"}, {"10:10", "11:00"}, {"11:10", "12:00"},
	{"13:00", "13:50"}, {"14:00", "14:50"}, {"15:10", "16:00"}, {"16:10", "17:00"},
	{"17:10", "18:00"}, {"18:40", "19:30"}, {"19:40", "20:30"}, {"20:40", "21:30"},
}

// MaxWeek is the last week of a term the timetable knows (weeks 1–30).
const MaxWeek = 30

const termKey = "term"

// Course is a timetable entry as the timetable ability returns it, with
// its periods ("3-4") when its times are whole periods.
type Course struct {
	ID       string  `json:"id"`
	Title    string  `json:"title"`
	Weekday  int     `json:"weekday"`
	Start    string  `json:"start"`
	End      string  `json:"end"`
	Location *string `json:"location"`
	Teacher  *string `json:"teacher"`
	Note     *string `json:"note"`
	Weeks    []int   `json:"weeks"`
	Source   string  `json:"source"`
	Periods  string  `json:"periods,omitempty"`
}

// PeriodsOf returns "3-4" (or "5") for start and end times that begin and
// end whole periods, or "".
func PeriodsOf(start, end string) string {
	a, b := 0, 0
	for i, p := range Periods {
		if p.Start == start {
			a = i + 1
		}
		if p.End == end {
			b = i + 1
		}
	}
	switch {
	case a == 0 || b == 0 || b < a:
		return ""
	case a == b:
		return strconv.Itoa(a)
	}
	return strconv.Itoa(a) + "-" + strconv.Itoa(b)
}

var periodsRE = regexp.MustCompile(`^([0-9]{1,2})(?:-([0-9]{1,2}))?$`)

// ParsePeriods reads "3-4" or "5" into the clock times of those periods.
func ParsePeriods(s string) (start, end string, err error) {
	m := periodsRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return "", "", fmt.Errorf("periods %q: write N or N-M with periods 1–12", s)
	}
	a, _ := strconv.Atoi(m[1])
	b := a
	if m[2] != "" {
		b, _ = strconv.Atoi(m[2])
	}
	if a < 1 || b > 12 || b < a {
		return "", "", fmt.Errorf("periods %q: periods run 1–12, the first not after the last", s)
	}
	return Periods[a-1].Start, Periods[b-1].End, nil
}

// Term is the stored term: the date of the Monday of week 1.
type Term struct {
	Start string `json:"start"` // YYYY-MM-DD
}

// WeekOf returns the week of term on the Beijing-time day of t (1 for the
// week starting on start), or 0 when t is before the term or after
// MaxWeek.
func WeekOf(start time.Time, t time.Time) int {
	d := dayDiff(start, t)
	if d < 0 {
		return 0
	}
	w := d/7 + 1
	if w > MaxWeek {
		return 0
	}
	return w
}

func dayDiff(from, to time.Time) int {
	a, b := from.In(i18n.Beijing), to.In(i18n.Beijing)
	da := time.Date(a.Year(), a.Month(), a.Day(), 12, 0, 0, 0, time.UTC)
	db := time.Date(b.Year(), b.Month(), b.Day(), 12, 0, 0, 0, time.UTC)
	return int(math.Round(db.Sub(da).Hours() / 24))
}

func (c *Context) termStart() (time.Time, bool, error) {
	var term Term
	ok, err := c.KV.Get(termKey, &term)
	if err != nil || !ok {
		return time.Time{}, false, err
	}
	t, err := time.ParseInLocation("2006-01-02", term.Start, i18n.Beijing)
	return t, err == nil, err
}

// isoWeekday is 1 = Monday … 7 = Sunday.
func isoWeekday(t time.Time) int {
	wd := int(t.In(i18n.Beijing).Weekday())
	if wd == 0 {
		return 7
	}
	return wd
}

func courses(c *Context, weekday int) ([]Course, error) {
	var out struct {
		Entries []Course `json:"entries"`
	}
	args := map[string]any{}
	if weekday > 0 {
		args["weekday"] = weekday
	}
	if err := c.Ability("timetable.get", args, &out); err != nil {
		return nil, err
	}
	for i := range out.Entries {
		out.Entries[i].Periods = PeriodsOf(out.Entries[i].Start, out.Entries[i].End)
	}
	return out.Entries, nil
}

// inWeek reports whether a course meets in week w (no weeks listed, or an
// unknown week: always).
func inWeek(c Course, w int) bool {
	if len(c.Weeks) == 0 || w == 0 {
		return true
	}
	for _, x := range c.Weeks {
		if x == w {
			return true
		}
	}
	return false
}

// TimetableDayInput is timetable.today's input.
type TimetableDayInput struct {
	Date string `json:"date,omitempty" jsonschema:"the day, YYYY-MM-DD (Beijing time); today when absent" harness:"pattern=^[0-9]{4}-[0-9]{2}-[0-9]{2}$"`
}

// TimetableDay is timetable.today's result: the day's courses by start,
// the week of term (null when no term is set or the day is outside it),
// and the ids of the course on now and of the next one today.
type TimetableDay struct {
	Date    string   `json:"date"`
	Weekday int      `json:"weekday"`
	Week    *int     `json:"week"`
	Courses []Course `json:"courses"`
	Current *string  `json:"current"`
	Next    *string  `json:"next"`
}

func timetableToday(c *Context, in TimetableDayInput) (TimetableDay, error) {
	day := c.Now.In(i18n.Beijing)
	isToday := true
	if in.Date != "" {
		d, err := time.ParseInLocation("2006-01-02", in.Date, i18n.Beijing)
		if err != nil {
			return TimetableDay{}, Errorf("date %q is not a day: write YYYY-MM-DD", in.Date)
		}
		isToday = d.Format("2006-01-02") == day.Format("2006-01-02")
		day = d
	}
	out := TimetableDay{Date: day.Format("2006-01-02"), Weekday: isoWeekday(day), Courses: []Course{}}
	week := 0
	if start, ok, err := c.termStart(); err != nil {
		return out, err
	} else if ok {
		if week = WeekOf(start, day); week > 0 {
			out.Week = &week
		}
	}
	list, err := courses(c, out.Weekday)
	if err != nil {
		return out, err
	}
	clock := c.Now.In(i18n.Beijing).Format("15:04")
	for _, co := range list {
		if !inWeek(co, week) {
			continue
		}
		out.Courses = append(out.Courses, co)
		c.textBy(co.Source)
		if !isToday {
			continue
		}
		id := co.ID
		if co.Start <= clock && clock < co.End && out.Current == nil {
			out.Current = &id
		}
		if co.Start > clock && out.Next == nil {
			out.Next = &id
		}
	}
	return out, nil
}

// TimetableWeekInput is timetable.week's input.
type TimetableWeekInput struct {
	Week int `json:"week,omitempty" jsonschema:"the week of term (1–30); the current week when absent" harness:"min=1,max=30"`
}

// TimetableWeek is timetable.week's result: seven days from Monday, each
// with its date (Unix ms of its midnight, Beijing time) and courses.
type TimetableWeek struct {
	Week *int           `json:"week"`
	Days []TimetableDow `json:"days"`
}

// TimetableDow is one day of TimetableWeek.
type TimetableDow struct {
	Weekday int      `json:"weekday"`
	Date    int64    `json:"date"`
	Courses []Course `json:"courses"`
}

func timetableWeek(c *Context, in TimetableWeekInput) (TimetableWeek, error) {
	now := c.Now.In(i18n.Beijing)
	monday := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, i18n.Beijing).AddDate(0, 0, 1-isoWeekday(now))
	week := 0
	start, ok, err := c.termStart()
	if err != nil {
		return TimetableWeek{}, err
	}
	if ok {
		week = WeekOf(start, now)
		if in.Week > 0 {
			week = in.Week
			monday = start.AddDate(0, 0, 7*(in.Week-1))
		}
	} else if in.Week > 0 {
		return TimetableWeek{}, Errorf("no term is set: set the first day of term with timetable__setTerm first")
	}
	out := TimetableWeek{}
	if week > 0 {
		out.Week = &week
	}
	all, err := courses(c, 0)
	if err != nil {
		return out, err
	}
	for wd := 1; wd <= 7; wd++ {
		d := TimetableDow{Weekday: wd, Date: monday.AddDate(0, 0, wd-1).UnixMilli(), Courses: []Course{}}
		for _, co := range all {
			if co.Weekday == wd && inWeek(co, week) {
				d.Courses = append(d.Courses, co)
				c.textBy(co.Source)
			}
		}
		out.Days = append(out.Days, d)
	}
	return out, nil
}

// TimetableAddInput is timetable.add's input: periods, or start and end.
type TimetableAddInput struct {
	ID       string `json:"id,omitempty" jsonschema:"an existing course's id to replace it; absent for a new course" harness:"pattern=^[A-Za-z0-9_.:-]{1,64}$"`
	Title    string `json:"title" jsonschema:"the course name" harness:"min=1,max=100,trim"`
	Weekday  int    `json:"weekday" jsonschema:"1 = Monday … 7 = Sunday" harness:"min=1,max=7"`
	Periods  string `json:"periods,omitempty" jsonschema:"the class periods, e.g. \"3-4\" (1 = 08:00–08:50 … 12 = 20:40–21:30)" harness:"max=16"`
	Start    string `json:"start,omitempty" jsonschema:"start time HH:mm when not given as periods" harness:"pattern=^([01][0-9]|2[0-3]):[0-5][0-9]$"`
	End      string `json:"end,omitempty" jsonschema:"end time HH:mm when not given as periods" harness:"pattern=^([01][0-9]|2[0-3]):[0-5][0-9]$"`
	Location string `json:"location,omitempty" jsonschema:"the room, e.g. 理教 107" harness:"max=200,trim"`
	Teacher  string `json:"teacher,omitempty" harness:"max=200,trim"`
	Weeks    []int  `json:"weeks,omitempty" jsonschema:"the weeks of term it meets (1–30); every week when absent" harness:"max=30"`
}

func timetableAdd(c *Context, in TimetableAddInput) (Course, error) {
	start, end := in.Start, in.End
	switch {
	case in.Periods != "" && (start != "" || end != ""):
		return Course{}, Errorf("give periods, or start and end, not both")
	case in.Periods != "":
		var err error
		if start, end, err = ParsePeriods(in.Periods); err != nil {
			return Course{}, Errorf("%v", err)
		}
	case start == "" || end == "":
		return Course{}, Errorf("give periods (e.g. \"3-4\"), or start and end (HH:mm)")
	}
	for i, w := range in.Weeks {
		if w < 1 || w > MaxWeek {
			return Course{}, Errorf("weeks[%d]: %d is not a week of term (1–30)", i, w)
		}
	}
	id := in.ID
	if id == "" {
		// The same course at the same time is one entry: adding it again replaces it.
		sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d\x00%s", in.Title, in.Weekday, start)))
		id = "c" + hex.EncodeToString(sum[:6])
	}
	entry := map[string]any{"id": id, "title": in.Title, "weekday": in.Weekday, "start": start, "end": end}
	if in.Location != "" {
		entry["location"] = in.Location
	}
	if in.Teacher != "" {
		entry["teacher"] = in.Teacher
	}
	if len(in.Weeks) > 0 {
		entry["weeks"] = in.Weeks
	}
	if err := c.Ability("timetable.upsert", map[string]any{"entries": []any{entry}}, nil); err != nil {
		return Course{}, err
	}
	list, err := courses(c, in.Weekday)
	if err != nil {
		return Course{}, err
	}
	for _, co := range list {
		if co.ID == id && co.Source == c.Plugin {
			return co, nil
		}
	}
	return Course{}, fmt.Errorf("course %s was written but is not in the timetable", id)
}

// TimetableRemoveInput is timetable.remove's input.
type TimetableRemoveInput struct {
	ID string `json:"id" jsonschema:"the course's id (from timetable__today or timetable__week)" harness:"min=1,max=64"`
}

// TimetableRemoved is timetable.remove's result.
type TimetableRemoved struct {
	Removed int `json:"removed"`
}

func timetableRemove(c *Context, in TimetableRemoveInput) (TimetableRemoved, error) {
	var out TimetableRemoved
	if err := c.Ability("timetable.remove", map[string]any{"ids": []any{in.ID}}, &out); err != nil {
		return out, err
	}
	if out.Removed == 0 {
		return out, Errorf("no course %q that this timetable added (courses a plugin imported are removed in that plugin)", in.ID)
	}
	return out, nil
}

// TimetableTermInput is timetable.setTerm's input.
type TimetableTermInput struct {
	Start string `json:"start" jsonschema:"the first day of week 1, YYYY-MM-DD (a Monday)" harness:"pattern=^[0-9]{4}-[0-9]{2}-[0-9]{2}$"`
}

func timetableSetTerm(c *Context, in TimetableTermInput) (Term, error) {
	d, err := time.ParseInLocation("2006-01-02", in.Start, i18n.Beijing)
	if err != nil {
		return Term{}, Errorf("start %q is not a day: write YYYY-MM-DD", in.Start)
	}
	if d.Weekday() != time.Monday {
		return Term{}, Errorf("start %s is a %s; week 1 starts on a Monday", in.Start, d.Weekday())
	}
	t := Term{Start: in.Start}
	return t, c.KV.Set(termKey, t)
}

var timetableStrings = Strings{
	i18n.Zh: {"none": "今天没有课", "course": func(title, at string) string { return at + " " + title }, "week": func(n int) string { return "第 " + strconv.Itoa(n) + " 周" }},
	i18n.En: {"none": "No classes today", "course": func(title, at string) string { return at + " " + title }, "week": func(n int) string { return "Week " + strconv.Itoa(n) }},
}

// Timetable is the timetable: today's and a week's courses with PKU's
// periods and the week of term, and adding and removing courses.
var Timetable = &Plugin{
	Private:     true,
	ID:          "timetable",
	Name:        "课表",
	Description: "按星期和节次排列的课程表,算出今天的课和本学期第几周。",
	Version:     "0.1.0",
	Icon:        "school",
	Abilities:   []string{"timetable"},
	I18n: I18n{
		En: EnText{
			Name:        "Timetable",
			Description: "Your classes by weekday and period, with today’s classes and the week of term worked out.",
			Tools: map[string]ToolText{
				"today": {Title: "Classes on a day"}, "week": {Title: "Classes this week"}, "add": {Title: "Add a class"},
				"remove": {Title: "Remove a class"}, "setTerm": {Title: "Set the first day of term"},
			},
			Widgets:     map[string]UIText{"today": {Title: "Classes today", Description: "Today’s classes with the current and the next one marked, and the week of term."}},
			Screens:     map[string]UIText{"main": {Title: "Timetable"}},
			Settings:    map[string]SettingText{"main": {Title: "Timetable", Subtitle: "Classes and the week of term"}},
			Commands:    map[string]CommandText{"classes": {Description: "Classes today", Aliases: []string{"timetable"}}},
			DataSources: map[string]UIText{"today": {Title: "Classes today"}},
		},
		Strings: timetableStrings,
	},
	Instructions: `课表:问今天/某天有什么课用 timetable__today,问一周用 timetable__week;节次 1–12(1 = 08:00,5 = 13:00,10 = 18:40)。`,
	DataSources:  []DataSource{{Name: "today", Title: "今日课程", Tool: "today", TTL: 10 * time.Minute}},
	Widgets:      []UI{{Name: "today", Document: timetableWidget}},
	Screens:      []UI{{Name: "main", Document: timetableScreen}},
	Settings:     []Setting{{Screen: "main", Title: "课表", Subtitle: "课程和教学周", Icon: "school"}},
	Commands:     []Command{{Name: "classes", Description: "今天的课", Aliases: []string{"课表"}, Run: timetableCommand}},
	Tools: []*Tool{
		{Name: "today", Title: "某天的课", Effect: plugin.EffectRead, Run: Func(timetableToday),
			Description: "Courses on a day (today by default), by start time, with the week of term and the ids of the current and next course."},
		{Name: "week", Title: "本周课表", Effect: plugin.EffectRead, Run: Func(timetableWeek),
			Description: "The courses of a week of term (the current week by default), Monday to Sunday."},
		{Name: "add", Title: "添加课程", Effect: plugin.EffectWrite, Run: Func(timetableAdd),
			Description: "Add a course (or replace one by id): weekday and periods such as \"3-4\", or start and end times."},
		{Name: "remove", Title: "删除课程", Effect: plugin.EffectWrite, Run: Func(timetableRemove),
			Description: "Remove a course this timetable added, by id."},
		{Name: "setTerm", Title: "设置开学日期", Effect: plugin.EffectWrite, Run: Func(timetableSetTerm),
			Description: "Set the Monday of week 1 of the term, so that weeks of term are known."},
	},
}

// timetableCommand is /classes: today's classes, shown to the user.
func timetableCommand(c *Context, _ string) (string, error) {
	var day TimetableDay
	if err := c.CallTool("timetable", "today", nil, &day); err != nil {
		return "", err
	}
	str := timetableStrings
	if len(day.Courses) == 0 {
		return str.T(c.Locale, "none"), nil
	}
	var lines []string
	if day.Week != nil {
		lines = append(lines, str.T(c.Locale, "week", *day.Week))
	}
	for _, co := range day.Courses {
		lines = append(lines, str.T(c.Locale, "course", co.Title, co.Start+"–"+co.End))
	}
	return strings.Join(lines, "\n"), nil
}
