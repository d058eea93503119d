package builtin

import (
	_ "embed"
	"regexp"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/i18n"
	"github.com/pkuinfo/harness/plugin"
)

// The schedule plugin: reminders as schedules of the scheduler ability
// (migrations 103 and 105). Each reminder is a schedule of this plugin's
// fire tool, which the scheduler runs as the scheduler actor at its times.

//go:embed ui/schedule/upcoming.json
var scheduleWidget []byte

//go:embed ui/schedule/main.json
var scheduleScreen []byte

const (
	firedKey  = "fired"
	firedKeep = 20
)

var hhmmRE = regexp.MustCompile(`^([01][0-9]|2[0-3]):[0-5][0-9]$`)

// RemindInput is schedule.remind's input: exactly one of at (once) and
// daily (every day, or every everyDays days, at HH:mm), and optionally how
// many times.
type RemindInput struct {
	Text      string `json:"text" jsonschema:"what to remind the user of, in their words" harness:"min=1,max=100,trim"`
	At        string `json:"at,omitempty" jsonschema:"once, at YYYY-MM-DD HH:mm (Beijing time)" harness:"max=40,trim"`
	Daily     string `json:"daily,omitempty" jsonschema:"repeating, at HH:mm (Beijing time) every day or every everyDays days" harness:"pattern=^([01][0-9]|2[0-3]):[0-5][0-9]$"`
	EveryDays int    `json:"everyDays,omitempty" jsonschema:"with daily: every this many days, counted from the first time" harness:"min=1,max=365"`
	Times     int    `json:"times,omitempty" jsonschema:"with daily: stop after this many reminders" harness:"min=1,max=1000"`
}

// Reminder is one reminder as schedule.list shows it; times are Unix ms.
type Reminder struct {
	ID        int64   `json:"id"`
	Text      string  `json:"text"`
	At        *int64  `json:"at"`
	Daily     *string `json:"daily"`
	EveryDays *int    `json:"everyDays"`
	Remaining *int    `json:"remaining"`
	Enabled   bool    `json:"enabled"`
	NextRun   *int64  `json:"nextRun"`
}

// schedule is a scheduler ability Schedule, as much as reminders read.
type schedule struct {
	ID        int64          `json:"id"`
	Tool      string         `json:"tool"`
	Title     string         `json:"title"`
	Input     map[string]any `json:"input"`
	At        *int64         `json:"at"`
	Daily     *string        `json:"daily"`
	EveryDays *int           `json:"everyDays"`
	Remaining *int           `json:"remaining"`
	Enabled   bool           `json:"enabled"`
	NextRun   *int64         `json:"nextRun"`
}

func (s schedule) reminder() Reminder {
	text, _ := s.Input["text"].(string)
	return Reminder{ID: s.ID, Text: text, At: s.At, Daily: s.Daily, EveryDays: s.EveryDays, Remaining: s.Remaining, Enabled: s.Enabled, NextRun: s.NextRun}
}

func scheduleRemind(c *Context, in RemindInput) (Reminder, error) {
	args := map[string]any{"tool": "fire", "title": in.Text, "input": map[string]any{"text": in.Text}}
	switch {
	case (in.At == "") == (in.Daily == ""):
		return Reminder{}, Errorf("give at (once, YYYY-MM-DD HH:mm) or daily (HH:mm), not both")
	case in.At != "":
		if in.EveryDays > 0 || in.Times > 0 {
			return Reminder{}, Errorf("everyDays and times go with daily; a reminder at one time goes off once")
		}
		t, err := ParseLocalTime(in.At)
		if err != nil {
			return Reminder{}, Errorf("at: %v", err)
		}
		if !t.After(c.Now) {
			return Reminder{}, Errorf("at %s is not in the future", in.At)
		}
		args["at"] = t.UnixMilli()
	default:
		args["daily"] = in.Daily
		if in.EveryDays > 0 {
			args["everyDays"] = in.EveryDays
		}
		if in.Times > 0 {
			args["times"] = in.Times
		}
	}
	var s schedule
	if err := c.Ability("scheduler.create", args, &s); err != nil {
		return Reminder{}, err
	}
	return s.reminder(), nil
}

// ReminderList is schedule.list's result, by next time.
type ReminderList struct {
	Items []Reminder `json:"items"`
}

func scheduleList(c *Context, _ Empty) (ReminderList, error) {
	var out struct {
		Items []schedule `json:"items"`
	}
	if err := c.Ability("scheduler.list", nil, &out); err != nil {
		return ReminderList{}, err
	}
	list := ReminderList{Items: []Reminder{}}
	for _, s := range out.Items {
		if s.Tool == "fire" && s.Enabled {
			list.Items = append(list.Items, s.reminder())
		}
	}
	sortReminders(list.Items)
	return list, nil
}

func sortReminders(rs []Reminder) {
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && nextOf(rs[j]) < nextOf(rs[j-1]); j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
}

func nextOf(r Reminder) int64 {
	if r.NextRun == nil {
		return 1 << 62
	}
	return *r.NextRun
}

// ReminderIDInput is schedule.cancel's input.
type ReminderIDInput struct {
	ID int64 `json:"id" jsonschema:"the reminder's id (from schedule__list)" harness:"min=1"`
}

// ReminderCancelled is schedule.cancel's result.
type ReminderCancelled struct {
	Cancelled bool  `json:"cancelled"`
	ID        int64 `json:"id"`
}

func scheduleCancel(c *Context, in ReminderIDInput) (ReminderCancelled, error) {
	if err := c.Ability("scheduler.remove", map[string]any{"id": in.ID}, nil); err != nil {
		return ReminderCancelled{}, err
	}
	return ReminderCancelled{Cancelled: true, ID: in.ID}, nil
}

// FireInput is schedule.fire's input.
type FireInput struct {
	Text string `json:"text" harness:"min=1,max=100"`
}

// Fired is one reminder that went off.
type Fired struct {
	Text string `json:"text"`
	At   int64  `json:"at"`
}

// FiredList is schedule.recent's result, newest first.
type FiredList struct {
	Items []Fired `json:"items"`
}

// scheduleFire is what the scheduler runs at a reminder's time: the
// reminder goes on the recent list the dashboard shows.
func scheduleFire(c *Context, in FireInput) (Fired, error) {
	if c.Actor == host.ActorAgent {
		// The assistant cannot make a reminder go off (a prompt could fake one on the dashboard).
		return Fired{}, Errorf("fire runs when a reminder is due, by the scheduler; set one with schedule__remind")
	}
	var list []Fired
	if _, err := c.KV.Get(firedKey, &list); err != nil {
		return Fired{}, err
	}
	f := Fired{Text: in.Text, At: c.Now.UnixMilli()}
	list = append([]Fired{f}, list...)
	if len(list) > firedKeep {
		list = list[:firedKeep]
	}
	return f, c.KV.Set(firedKey, list)
}

func scheduleRecent(c *Context, _ Empty) (FiredList, error) {
	out := FiredList{Items: []Fired{}}
	_, err := c.KV.Get(firedKey, &out.Items)
	if out.Items == nil {
		out.Items = []Fired{}
	}
	return out, err
}

var scheduleStrings = Strings{
	i18n.Zh: {
		"set": func(text string, at time.Time) string {
			return "好的," + i18n.FormatLocalDateTime(at, i18n.Zh) + " 提醒你:" + text
		},
		"none": "没有提醒",
	},
	i18n.En: {
		"set": func(text string, at time.Time) string {
			return "I’ll remind you on " + i18n.FormatLocalDateTime(at, i18n.En) + ": " + text
		},
		"none": "No reminders",
	},
}

// Schedule is reminders: once, every day, or every N days at a time, a
// number of times; a widget of the next ones and the last one that went off.
var Schedule = &Plugin{
	Private:     true,
	ID:          "schedule",
	Name:        "提醒",
	Description: "定时提醒:一次、每天,或每隔几天在同一时间,可以限定次数。",
	Version:     "0.1.0",
	Icon:        "refresh",
	Abilities:   []string{"scheduler"},
	// Reminders are the app's own and undone with one tap, and the
	// scheduler runs fire without anyone to ask: write tools start at auto.
	DefaultModes: map[plugin.Effect]host.Mode{plugin.EffectWrite: host.ModeAuto},
	I18n: I18n{
		En: EnText{
			Name:        "Reminders",
			Description: "Reminders once, every day, or every few days at the same time, as many times as you like.",
			Tools: map[string]ToolText{
				"remind": {Title: "Set a reminder"}, "list": {Title: "List reminders"}, "cancel": {Title: "Cancel a reminder"},
				"fire": {Title: "Remind now"}, "recent": {Title: "Recent reminders"},
			},
			Widgets:     map[string]UIText{"upcoming": {Title: "Reminders", Description: "The next reminders, and the one that went off last."}},
			Screens:     map[string]UIText{"main": {Title: "Reminders"}},
			Settings:    map[string]SettingText{"main": {Title: "Reminders", Subtitle: "What goes off when"}},
			Commands:    map[string]CommandText{"remind": {Description: "Set a reminder", ArgHint: "what, and when", Prompt: "Remind me: {{input}}", Aliases: []string{"reminder"}}},
			DataSources: map[string]UIText{"upcoming": {Title: "Next reminders"}, "recent": {Title: "Recent reminders"}},
		},
		Strings: scheduleStrings,
	},
	Instructions: `提醒:用户说"X 点提醒我""每天/每隔 N 天 HH:mm 提醒我,共 M 次"时用 schedule__remind(at 为北京时间 YYYY-MM-DD HH:mm 的一次提醒;daily 为每天的 HH:mm,everyDays 为间隔天数,times 为次数)。`,
	DataSources: []DataSource{
		{Name: "upcoming", Title: "接下来的提醒", Tool: "list", TTL: time.Minute},
		{Name: "recent", Title: "刚响过的提醒", Tool: "recent", TTL: time.Minute},
	},
	Widgets:  []UI{{Name: "upcoming", Document: scheduleWidget}},
	Screens:  []UI{{Name: "main", Document: scheduleScreen}},
	Settings: []Setting{{Screen: "main", Title: "提醒", Subtitle: "定时提醒", Icon: "bell"}},
	Commands: []Command{{Name: "remind", Description: "设置提醒", ArgHint: "提醒什么、什么时候", Aliases: []string{"提醒"},
		Prompt: "提醒我:{{input}}"}},
	Tools: []*Tool{
		{Name: "remind", Title: "设置提醒", Effect: plugin.EffectWrite, Run: Func(scheduleRemind),
			Description: "Set a reminder: once (at), or at daily HH:mm every day or every everyDays days, optionally times in all. E.g. every 3 days at 09:00, 16 times: {daily: \"09:00\", everyDays: 3, times: 16}."},
		{Name: "list", Title: "查看提醒", Effect: plugin.EffectRead, Run: Func(scheduleList),
			Description: "The user's active reminders, soonest first, with the next time (Unix ms) and the times left."},
		{Name: "cancel", Title: "取消提醒", Effect: plugin.EffectWrite, Run: Func(scheduleCancel),
			Description: "Cancel a reminder by id."},
		{Name: "fire", Title: "提醒", Effect: plugin.EffectWrite, OnDemand: true, Run: Func(scheduleFire),
			Description: "Run by the scheduler when a reminder is due; not for the assistant."},
		{Name: "recent", Title: "刚响过的提醒", Effect: plugin.EffectRead, Run: Func(scheduleRecent),
			Description: "The reminders that went off lately, newest first."},
	},
}
