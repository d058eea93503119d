package mock

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// The tool names the default routes call (the model's names).
const (
	ScheduleTool  = "schedule__remind"
	ShuttleTool   = "shuttle__next"
	DashboardTool = "dashboard__upsertWidget"
	RenderTool    = "ui__render"
	RememberTool  = "memory__remember"
	CanteenTool   = "mcp-demo-canteen__reserveSeat"
	UseTool       = "plugins__use"
)

var beijing = time.FixedZone("CST", 8*3600)

func args(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// one is a route that calls one tool and then sums up its result.
func one(tool string, input func(s *State) any) func(s *State) Step {
	return func(s *State) Step {
		if s.Round() == 0 {
			return Step{Calls: []Call{{Tool: tool, Args: args(input(s))}}}
		}
		return Step{Text: summary(s)}
	}
}

// summary sums up the turn's results: each tool and what it returned (cut
// at 1,500 bytes), or the error the app sent back; the shuttle's departures and a shown
// ui__render document in a sentence, as a model would say them.
func summary(s *State) string {
	var b strings.Builder
	for i, r := range s.Results {
		if i > 0 {
			b.WriteString("\n")
		}
		content := r.Content
		if len(content) > 1500 {
			content = content[:1500] + "…"
		}
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal([]byte(r.Content), &e) == nil && e.Error != "" {
			fmt.Fprintf(&b, "`%s` 没有成功:%s", r.Tool, e.Error)
			continue
		}
		if r.Tool == RenderTool {
			var shown struct {
				Shown bool `json:"shown"`
			}
			if json.Unmarshal([]byte(r.Content), &shown) == nil && shown.Shown {
				b.WriteString("表单在上面:填好后点按钮,提交前会再问你一次。")
				continue
			}
		}
		if r.Tool == ShuttleTool {
			if text := shuttle(r.Content); text != "" {
				b.WriteString(text)
				continue
			}
		}
		fmt.Fprintf(&b, "`%s` 的结果:%s", r.Tool, content)
	}
	return b.String()
}

// DefaultRoutes is the seed's table adapted to this project's tools, in
// the order they are tried (docs/DECISIONS.md §11 "Mock model"). now dates the
// one-off reminder.
func DefaultRoutes(now func() time.Time) []Route {
	return []Route{
		// Test-only: the text after "回显:"/"echo:" is the answer, verbatim
		// (Markdown, raw HTML), so a test can make the model say anything.
		{Name: "echo", Words: []string{"回显:", "echo:"}, Plan: func(s *State) Step {
			return Step{Text: after(s.Message, "回显:", "echo:")}
		}},
		// Test-only: the JSON after "渲染:"/"render:" is a genui document the
		// model shows through ui__render.
		{Name: "render", Words: []string{"渲染:", "render:"}, Plan: func(s *State) Step {
			if s.Round() == 0 {
				return Step{Calls: []Call{{Tool: RenderTool, Args: `{"document":` + after(s.Message, "渲染:", "render:") + `}`}}}
			}
			return Step{Text: summary(s)}
		}},
		// Test-only: "调用:"/"call:" TOOL ARGS calls the model-side tool name
		// with the JSON arguments that follow it, then sums up. Several of them
		// in one message are called in order, one a round, all in one turn (a
		// read, then a call that turn decides).
		{Name: "call", Words: []string{"调用:", "call:"}, Plan: func(s *State) Step {
			if calls := scripted(s.Message); s.Round() < len(calls) {
				return Step{Calls: []Call{calls[s.Round()]}}
			}
			return Step{Text: summary(s)}
		}},
		{Name: "remote plugin", Words: []string{"远程插件", "remote plugin"}, Plan: remotePlugin},
		{Name: "authoring", Words: []string{"写插件", "write a plugin", "plugin"}, Plan: authoring},
		{Name: "bad tool name", Words: []string{"badtool", "坏工具"}, Plan: func(s *State) Step {
			switch s.Round() {
			case 0:
				return Step{Calls: []Call{{Tool: "no_such__tool", Args: `{}`}}}
			case 1:
				return Step{Calls: []Call{{Tool: ShuttleTool, Args: `{"count":1}`}}}
			}
			return Step{Text: summary(s)}
		}},
		{Name: "bad arguments", Words: []string{"badargs", "坏参数"}, Plan: func(s *State) Step {
			switch s.Round() {
			case 0:
				return Step{Calls: []Call{{Tool: ShuttleTool, Args: `{"count": 1,`}}}
			case 1:
				return Step{Calls: []Call{{Tool: ShuttleTool, Args: `{"count":1}`}}}
			}
			return Step{Text: summary(s)}
		}},
		{Name: "soon", Words: []string{"马上", "soon"}, Plan: one(ScheduleTool, func(s *State) any {
			return map[string]any{"text": reminderText(s.Message), "at": now().In(beijing).Add(2 * time.Minute).Format("2006-01-02 15:04")}
		})},
		{Name: "remind", Words: []string{"提醒", "remind"}, Plan: one(ScheduleTool, func(s *State) any {
			return map[string]any{"text": reminderText(s.Message), "daily": "09:00", "everyDays": 3, "times": 16}
		})},
		{Name: "dashboard", Words: []string{"看板", "dash"}, Plan: one(DashboardTool, func(*State) any {
			return map[string]any{"widget": "timetable.today", "size": "md"}
		})},
		{Name: "form", Words: []string{"表单", "form"}, Plan: one(RenderTool, func(*State) any {
			return map[string]any{"document": TopUpForm}
		})},
		{Name: "remember", Words: []string{"remember", "记住"}, Plan: one(RememberTool, func(s *State) any {
			text := s.Message
			if _, after, ok := strings.Cut(strings.ToLower(text), "remember"); ok {
				text = strings.TrimSpace(text[len(text)-len(after):])
			}
			return map[string]any{"text": strings.TrimLeft(text, " :,:,")}
		})},
		{Name: "canteen", Words: []string{"食堂", "canteen"}, Plan: one(CanteenTool, func(*State) any {
			return map[string]any{"canteen": "家园", "name": "同学"}
		})},
		{Name: "who", Words: []string{"who"}, Plan: func(s *State) Step {
			if len(s.Context) == 0 {
				return Step{Text: "这一轮没有注入任何 <context> 块。"}
			}
			return Step{Text: "注入的上下文是:\n" + strings.Join(s.Context, "\n")}
		}},
		{Name: "shuttle", Words: []string{"校车", "班车", "shuttle", "bus"}, Plan: one(ShuttleTool, func(*State) any {
			return map[string]any{}
		})},
	}
}

// TopUpForm is the genui document the form route renders: a campus-card
// top-up form whose button calls the wallet's top-up tool as the user.
var TopUpForm = map[string]any{
	"ui": 1, "kind": "screen", "title": "校园卡充值",
	"i18n": map[string]any{"en": map[string]any{"title": "Top up the campus card"}},
	"root": map[string]any{"type": "Column", "children": []any{
		map[string]any{"type": "Field", "name": "amount", "label": "金额(元)", "input": "number", "value": 50},
		map[string]any{"type": "Button", "text": "充值", "style": "primary",
			"action": map[string]any{"tool": "wallet.topup", "args": map[string]any{"amount": "${form.amount}"}, "confirm": "确认充值 ${form.amount} 元?"}},
	}},
}

// The draft the authoring route writes: a plugin for the gym's opening
// hours; the first version has a deliberate error (an undeclared host).
const (
	draftManifest = `---
spec: 1
id: gym-hours
name: 体育馆开放时间
description: 查询邱德拔体育馆今天的开放时间。
version: 0.1.0
author: student
network: [www.pku.edu.cn]
tools:
  hours: tools/hours.yaml
---
Use gym-hours__hours when the user asks when the gym is open.
`
	draftTool = `title: 开放时间
description: Use when the user asks when the gym is open today. Returns { hours }.
effect: read
steps:
  - request: { url: "https://example.com/gym" }
    as: page
return: '{ hours: "06:30–22:00" }'
`
	fixedTool = `title: 开放时间
description: Use when the user asks when the gym is open today. Returns { hours, source }.
effect: read
return: '{ hours: "06:30–22:00", source: "https://www.pku.edu.cn" }'
`
)

// draft is the authoring route's files; fixed says whether the error is gone.
func draft(fixed bool) map[string]any {
	tool := draftTool
	if fixed {
		tool = fixedTool
	}
	return map[string]any{"files": map[string]any{"PLUGIN.md": draftManifest, "tools/hours.yaml": tool}}
}

// authoring is the flow of seed 003 "让 AI 帮你写插件": load the plugins
// tools, read the reference, validate a draft with an error, fix it,
// validate again, try its read tool, and open the review sheet.
func authoring(s *State) Step {
	steps := []Call{
		{Tool: UseTool, Args: args(map[string]any{"plugin": "plugins"})},
		{Tool: "plugins__reference", Args: `{}`},
		{Tool: "plugins__validate", Args: args(draft(false))},
		{Tool: "plugins__validate", Args: args(draft(true))},
		{Tool: "plugins__tryTool", Args: args(map[string]any{"files": draft(true)["files"], "tool": "hours", "input": map[string]any{}})},
		{Tool: "plugins__install", Args: args(draft(true))},
	}
	if r := s.Round(); r < len(steps) {
		c := steps[r]
		// onDemand tools appear after plugins__use; until then the check
		// in plan would refuse them, so the first round names only use.
		return Step{Calls: []Call{c}}
	}
	var b strings.Builder
	b.WriteString("草稿已通过校验,试运行返回了开放时间;我已为 gym-hours 打开审核页。装不装由你在审核页上决定。")
	for _, r := range s.Results {
		status := "ok"
		var e struct {
			Error string `json:"error"`
			OK    *bool  `json:"ok"`
		}
		if json.Unmarshal([]byte(r.Content), &e) == nil && e.Error != "" {
			status = "没有成功:" + e.Error
		} else if e.OK != nil && !*e.OK {
			status = "有问题,已修正"
		}
		fmt.Fprintf(&b, "\n- `%s`:%s", r.Tool, status)
	}
	return Step{Text: b.String()}
}

// remotePlugin loads the plugins tools and opens the add-remote-plugin sheet
// for the first http(s) URL in the message (the demo canteen's by default);
// the person adds it there, with a token if the server needs one.
func remotePlugin(s *State) Step {
	u := "http://127.0.0.1:8790/mcp"
	for _, w := range strings.Fields(s.Message) {
		if strings.HasPrefix(w, "https://") || strings.HasPrefix(w, "http://") {
			u = w
			break
		}
	}
	switch s.Round() {
	case 0:
		return Step{Calls: []Call{{Tool: UseTool, Args: args(map[string]any{"plugin": "plugins"})}}}
	case 1:
		return Step{Calls: []Call{{Tool: "plugins__installRemote", Args: args(map[string]any{"url": u})}}}
	}
	return Step{Text: "我已打开添加远程插件的页面:" + u + "。加不加由你在那里决定。"}
}

// shuttle words a shuttle__next result: the next departures per direction.
func shuttle(content string) string {
	var r struct {
		At         string `json:"at"`
		Directions []struct {
			From, To   string
			Departures []struct {
				Time      string `json:"time"`
				InMinutes int    `json:"inMinutes"`
			} `json:"departures"`
			Tomorrow *struct{ Time string } `json:"tomorrow"`
		} `json:"directions"`
	}
	if json.Unmarshal([]byte(content), &r) != nil || len(r.Directions) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "按 `shuttle__next`(%s 北京时间):", r.At)
	for _, d := range r.Directions {
		fmt.Fprintf(&b, "\n- %s → %s:", d.From, d.To)
		if len(d.Departures) == 0 {
			if d.Tomorrow != nil {
				fmt.Fprintf(&b, "今天没有了,明天首班 %s", d.Tomorrow.Time)
			}
			continue
		}
		for i, dep := range d.Departures {
			if i > 0 {
				b.WriteString("、")
			}
			fmt.Fprintf(&b, "%s(%d 分钟后)", dep.Time, dep.InMinutes)
		}
	}
	return b.String()
}

// reminderText is what a reminder says: the message, cut to 100 characters.
func reminderText(msg string) string {
	if r := []rune(strings.TrimSpace(msg)); len(r) > 100 {
		return string(r[:100])
	}
	return strings.TrimSpace(msg)
}

// scripted is the calls of the call route's message: each "调用:"/"call:"
// TOOL ARGS in it, ARGS {} when missing.
func scripted(msg string) []Call {
	var calls []Call
	for _, part := range strings.Split(strings.ReplaceAll(msg, "call:", "调用:"), "调用:")[1:] {
		tool, argv, _ := strings.Cut(strings.TrimSpace(part)+" ", " ")
		if argv = strings.TrimSpace(argv); argv == "" {
			argv = "{}"
		}
		calls = append(calls, Call{Tool: tool, Args: argv})
	}
	return calls
}

// after is msg after the first of keys it contains (case-insensitive), or
// msg when it holds none.
func after(msg string, keys ...string) string {
	low := strings.ToLower(msg)
	for _, k := range keys {
		if i := strings.Index(low, strings.ToLower(k)); i >= 0 {
			return strings.TrimSpace(msg[i+len(k):])
		}
	}
	return msg
}
