package builtin

import (
	_ "embed"
	"strconv"
	"sync"
	"time"

	"github.com/pkuinfo/harness/i18n"
	"github.com/pkuinfo/harness/plugin"
)

// The focus plugin (seed 003 "内置插件", the worked example): focus
// sessions kept in the plugin's KV, and the minutes focused on a day.

//go:embed ui/focus/today.json
var focusWidget []byte

//go:embed ui/focus/main.json
var focusScreen []byte

// FocusSession is one focus session; EndedAt is nil while it runs. Times
// are Unix milliseconds.
type FocusSession struct {
	ID        string `json:"id"`
	Label     string `json:"label"`
	StartedAt int64  `json:"startedAt"`
	EndedAt   *int64 `json:"endedAt"`
}

const (
	focusKey  = "sessions"
	focusKeep = 500 // sessions kept, the newest
)

// MinutesOn returns the minutes focused on the Beijing-time day of now,
// a running session counted up to now and every session cut at the day's
// midnights, rounded to the nearest minute. It is pure: now is a parameter.
func MinutesOn(list []FocusSession, now time.Time) int {
	d := now.In(i18n.Beijing)
	start := time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, i18n.Beijing).UnixMilli()
	end := time.Date(d.Year(), d.Month(), d.Day()+1, 0, 0, 0, 0, i18n.Beijing).UnixMilli()
	var ms int64
	for _, s := range list {
		a := max(s.StartedAt, start)
		b := now.UnixMilli()
		if s.EndedAt != nil {
			b = *s.EndedAt
		}
		b = min(b, end)
		if b > a {
			ms += b - a
		}
	}
	return int((ms + 30_000) / 60_000)
}

func runningSession(list []FocusSession) *FocusSession {
	for i := range list {
		if list[i].EndedAt == nil {
			return &list[i]
		}
	}
	return nil
}

func loadSessions(c *Context) ([]FocusSession, error) {
	var list []FocusSession
	_, err := c.KV.Get(focusKey, &list)
	return list, err
}

func saveSessions(c *Context, list []FocusSession) error {
	if len(list) > focusKeep {
		list = list[len(list)-focusKeep:]
	}
	return c.KV.Set(focusKey, list)
}

// FocusStartInput is focus.start's input.
type FocusStartInput struct {
	Label string `json:"label,omitempty" jsonschema:"what the user focuses on, e.g. \"高数作业\"" harness:"max=40,trim"`
}

// FocusStarted is focus.start's result.
type FocusStarted struct {
	Started bool   `json:"started"`
	Label   string `json:"label"`
}

// FocusStopped is focus.stop's result: the session's length in minutes,
// or why nothing stopped.
type FocusStopped struct {
	Stopped bool   `json:"stopped"`
	Minutes int    `json:"minutes"`
	Reason  string `json:"reason,omitempty"`
}

// FocusToday is focus.today's result.
type FocusToday struct {
	Minutes int           `json:"minutes"`
	Running *FocusRunning `json:"running"`
}

// FocusRunning is the running session in focus.today's result.
type FocusRunning struct {
	Label     string `json:"label"`
	StartedAt int64  `json:"startedAt"`
}

// Empty is the input of a tool that takes none.
type Empty struct{}

// focusMu serialises the read-modify-write of the session list within a process, so two
// faces starting (or stopping) focus at once make one session.
var focusMu sync.Mutex

func focusStart(c *Context, in FocusStartInput) (FocusStarted, error) {
	focusMu.Lock()
	defer focusMu.Unlock()
	list, err := loadSessions(c)
	if err != nil {
		return FocusStarted{}, err
	}
	if r := runningSession(list); r != nil {
		return FocusStarted{}, Errorf("已经有一个正在进行的专注(%s),请先结束它", r.Label)
	}
	now := c.Now.UnixMilli()
	s := FocusSession{ID: strconv.FormatInt(now, 36), Label: in.Label, StartedAt: now}
	if err := saveSessions(c, append(list, s)); err != nil {
		return FocusStarted{}, err
	}
	return FocusStarted{Started: true, Label: s.Label}, nil
}

func focusStop(c *Context, _ Empty) (FocusStopped, error) {
	focusMu.Lock()
	defer focusMu.Unlock()
	list, err := loadSessions(c)
	if err != nil {
		return FocusStopped{}, err
	}
	r := runningSession(list)
	if r == nil {
		return FocusStopped{Stopped: false, Reason: "nothing running"}, nil
	}
	// A clock set back while it ran ends the session where it began.
	now := max(c.Now.UnixMilli(), r.StartedAt)
	r.EndedAt = &now
	mins := int((now - r.StartedAt + 30_000) / 60_000)
	if err := saveSessions(c, list); err != nil {
		return FocusStopped{}, err
	}
	return FocusStopped{Stopped: true, Minutes: mins}, nil
}

func focusToday(c *Context, _ Empty) (FocusToday, error) {
	list, err := loadSessions(c)
	if err != nil {
		return FocusToday{}, err
	}
	out := FocusToday{Minutes: MinutesOn(list, c.Now)}
	if r := runningSession(list); r != nil {
		out.Running = &FocusRunning{Label: r.Label, StartedAt: r.StartedAt}
	}
	return out, nil
}

// focusStrings is the focus plugin's UI string table.
var focusStrings = Strings{
	i18n.Zh: {
		"today":   "今日专注",
		"minutes": func(n int) string { return strconv.Itoa(n) + " 分钟" },
		"running": func(label string) string {
			if label == "" {
				return "正在专注"
			}
			return "正在专注:" + label
		},
		"idle":  "还没有开始",
		"total": func(n int) string { return "今日专注 " + strconv.Itoa(n) + " 分钟" },
	},
	i18n.En: {
		"today":   "Focus today",
		"minutes": func(n int) string { return i18n.Plural(n, "min", "min") },
		"running": func(label string) string {
			if label == "" {
				return "Focusing"
			}
			return "Focusing on " + label
		},
		"idle":  "Not started yet",
		"total": func(n int) string { return "Focus today: " + i18n.Plural(n, "min", "min") },
	},
}

// Focus is the focus plugin: start, stop and today, a widget, a screen, a
// settings row and /focus.
var Focus = &Plugin{
	Private:     true,
	ID:          "focus",
	Name:        "专注",
	Description: "记录专注时段,查看今天专注了多久。",
	Version:     "0.1.0",
	Icon:        "clock",
	I18n: I18n{
		En: EnText{
			Name:        "Focus",
			Description: "Track focus sessions and see how long you focused today.",
			Tools:       map[string]ToolText{"start": {Title: "Start focusing"}, "stop": {Title: "Stop focusing"}, "today": {Title: "Focus today"}},
			Widgets:     map[string]UIText{"today": {Title: "Focus today", Description: "Minutes focused today and the running session, if any."}},
			Screens:     map[string]UIText{"main": {Title: "Focus"}},
			Settings:    map[string]SettingText{"main": {Title: "Focus", Subtitle: "Focus sessions"}},
			Commands:    map[string]CommandText{"focus": {Description: "Focus today, or start one: /focus calculus", ArgHint: "what you focus on", Aliases: []string{"pomodoro"}}},
			DataSources: map[string]UIText{"today": {Title: "Focus today"}},
		},
		Strings: focusStrings,
	},
	Instructions: `专注记录:用户说"开始学习/专注""我学完了"时用 focus__start / focus__stop;问"今天学了多久"时用 focus__today。`,
	DataSources:  []DataSource{{Name: "today", Title: "今日专注", Tool: "today", TTL: time.Minute}},
	Widgets:      []UI{{Name: "today", Document: focusWidget}},
	Screens:      []UI{{Name: "main", Document: focusScreen}},
	Settings:     []Setting{{Screen: "main", Title: "专注", Subtitle: "专注时段", Icon: "clock"}},
	Commands: []Command{{
		Name: "focus", Description: "今日专注,或开始一次:/focus 高数", ArgHint: "专注内容", Aliases: []string{"专注", "番茄钟"},
		Run: focusCommand,
	}},
	DefaultModes: nil,
	Tools: []*Tool{
		{Name: "start", Title: "开始专注", Effect: plugin.EffectWrite, Run: Func(focusStart),
			Description: "Start a focus session now. Fails if one is already running (stop it first)."},
		{Name: "stop", Title: "结束专注", Effect: plugin.EffectWrite, Run: Func(focusStop),
			Description: "Stop the running focus session. Returns its length in minutes."},
		{Name: "today", Title: "今日专注", Effect: plugin.EffectRead, Run: Func(focusToday),
			Description: "Minutes focused today (Beijing-time day), including the running session, and the running session if any."},
	},
}

// focusCommand is /focus: with text it starts a session labelled with it
// (through Host.Call, as the user), without it shows today's total. Its
// text is shown to the user, never sent to the model.
func focusCommand(c *Context, input string) (string, error) {
	l := c.Locale
	if input != "" {
		var out FocusStarted
		if err := c.CallTool("focus", "start", map[string]any{"label": input}, &out); err != nil {
			return "", err
		}
		return focusStrings.T(l, "running", out.Label), nil
	}
	var t FocusToday
	if err := c.CallTool("focus", "today", nil, &t); err != nil {
		return "", err
	}
	lines := focusStrings.T(l, "total", t.Minutes)
	if t.Running != nil {
		lines += "\n" + focusStrings.T(l, "running", t.Running.Label)
	}
	return lines, nil
}
