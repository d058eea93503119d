package builtin

import (
	_ "embed"
	"fmt"
	"strings"
	"time"

	"github.com/pkuinfo/harness/i18n"
	"github.com/pkuinfo/harness/plugin"
)

// The todos plugin: the tool face of the todos ability. Its list is every
// plugin's to-dos (one table, migration 101), and as the app's own to-do
// list it may change each of them.

//go:embed ui/todos/open.json
var todosWidget []byte

//go:embed ui/todos/main.json
var todosScreen []byte

// Todo is a to-do as the todos ability returns it; times are Unix ms.
type Todo struct {
	ID      int64  `json:"id"`
	Title   string `json:"title"`
	Notes   string `json:"notes"`
	Due     *int64 `json:"due"`
	Done    bool   `json:"done"`
	Source  string `json:"source"`
	Created int64  `json:"created"`
	Updated int64  `json:"updated"`
}

// TodoList is todos.list's result.
type TodoList struct {
	Items   []Todo `json:"items"`
	HasMore bool   `json:"hasMore"`
}

// TodosListInput is todos.list's input.
type TodosListInput struct {
	Done  *bool `json:"done,omitempty" jsonschema:"true for finished to-dos only, false for open ones only; absent for both"`
	Limit int   `json:"limit,omitempty" jsonschema:"how many at most" harness:"min=1,max=200,default=50"`
}

// TodosAddInput is todos.add's input.
type TodosAddInput struct {
	Title string `json:"title" jsonschema:"what to do, short, in the user's words" harness:"min=1,max=200,trim"`
	Notes string `json:"notes,omitempty" jsonschema:"details, optional" harness:"max=2000"`
	Due   string `json:"due,omitempty" jsonschema:"when it is due, Beijing time: YYYY-MM-DD HH:mm, or YYYY-MM-DD for the end of that day" harness:"max=40,trim"`
}

// TodosUpdateInput is todos.update's input.
type TodosUpdateInput struct {
	ID    int64   `json:"id" jsonschema:"the to-do's id (from todos__list)" harness:"min=1"`
	Title *string `json:"title,omitempty" jsonschema:"a new title" harness:"min=1,max=200,trim"`
	Notes *string `json:"notes,omitempty" jsonschema:"new notes" harness:"max=2000"`
	Due   *string `json:"due,omitempty" jsonschema:"a new due time (YYYY-MM-DD HH:mm or YYYY-MM-DD, Beijing time), or an empty string to clear it" harness:"max=40"`
}

// TodosDoneInput is todos.done's input.
type TodosDoneInput struct {
	ID   int64 `json:"id" jsonschema:"the to-do's id (from todos__list)" harness:"min=1"`
	Done bool  `json:"done,omitempty" jsonschema:"false to open it again" harness:"default=true"`
}

// TodosIDInput is the input of todos.remove.
type TodosIDInput struct {
	ID int64 `json:"id" jsonschema:"the to-do's id (from todos__list)" harness:"min=1"`
}

// ParseLocalTime reads a Beijing wall time "YYYY-MM-DD HH:mm" (also with
// a T), or a date "YYYY-MM-DD", which means 23:59 that day; the error says
// which forms are accepted.
func ParseLocalTime(s string) (time.Time, error) {
	s = strings.TrimSpace(strings.Replace(s, "T", " ", 1))
	for _, layout := range []string{"2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, i18n.Beijing); err == nil {
			if layout == "2006-01-02" {
				t = t.Add(23*time.Hour + 59*time.Minute)
			}
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time: write YYYY-MM-DD HH:mm or YYYY-MM-DD (Beijing time)", s)
}

func todosList(c *Context, in TodosListInput) (TodoList, error) {
	args := map[string]any{"limit": in.Limit}
	if in.Done != nil {
		args["done"] = *in.Done
	}
	var out TodoList
	err := c.Ability("todos.list", args, &out)
	if out.Items == nil {
		out.Items = []Todo{}
	}
	for _, t := range out.Items {
		c.textBy(t.Source)
	}
	return out, err
}

func todosAdd(c *Context, in TodosAddInput) (Todo, error) {
	args := map[string]any{"title": in.Title}
	if in.Notes != "" {
		args["notes"] = in.Notes
	}
	if in.Due != "" {
		t, err := ParseLocalTime(in.Due)
		if err != nil {
			return Todo{}, Errorf("due: %v", err)
		}
		args["due"] = t.UnixMilli()
	}
	var out Todo
	return out, c.Ability("todos.add", args, &out)
}

func todosUpdate(c *Context, in TodosUpdateInput) (Todo, error) {
	args := map[string]any{"id": in.ID}
	if in.Title != nil {
		args["title"] = *in.Title
	}
	if in.Notes != nil {
		args["notes"] = *in.Notes
	}
	if in.Due != nil {
		if *in.Due == "" {
			args["due"] = nil
		} else {
			t, err := ParseLocalTime(*in.Due)
			if err != nil {
				return Todo{}, Errorf("due: %v", err)
			}
			args["due"] = t.UnixMilli()
		}
	}
	var out Todo
	return out, c.Ability("todos.update", args, &out)
}

func todosDone(c *Context, in TodosDoneInput) (Todo, error) {
	var out Todo
	return out, c.Ability("todos.setDone", map[string]any{"id": in.ID, "done": in.Done}, &out)
}

// TodosRemoved is todos.remove's result.
type TodosRemoved struct {
	Removed bool  `json:"removed"`
	ID      int64 `json:"id"`
}

func todosRemove(c *Context, in TodosIDInput) (TodosRemoved, error) {
	var out TodosRemoved
	return out, c.Ability("todos.remove", map[string]any{"id": in.ID}, &out)
}

// todosContext tells the assistant how many to-dos are open and which are
// due within a day, before each turn.
func todosContext(c *Context, _ string) (string, error) {
	var list TodoList
	if err := c.Ability("todos.list", map[string]any{"done": false, "limit": 200}, &list); err != nil {
		return "", err
	}
	if len(list.Items) == 0 {
		return "", nil
	}
	var soon []string
	for _, t := range list.Items {
		if t.Due != nil && time.UnixMilli(*t.Due).Before(c.Now.Add(24*time.Hour)) {
			c.textBy(t.Source) // a document's to-do is its author's text
			soon = append(soon, fmt.Sprintf("%q (id %d) due %s", t.Title, t.ID, time.UnixMilli(*t.Due).In(i18n.Beijing).Format("2006-01-02 15:04")))
		}
	}
	s := fmt.Sprintf("open to-dos: %d", len(list.Items))
	if len(soon) > 0 {
		s += "; due within a day: " + strings.Join(soon, ", ")
	}
	return s, nil
}

var todosStrings = Strings{
	i18n.Zh: {
		"added": func(title string) string { return "已添加待办:" + title },
		"count": func(n int) string { return fmt.Sprintf("%d 项待办", n) },
	},
	i18n.En: {
		"added": func(title string) string { return "Added to-do: " + title },
		"count": func(n int) string { return i18n.Plural(n, "open to-do", "") },
	},
}

// Todos is the to-do list: list, add, update, done and remove over the
// todos ability, a widget of the open ones, a screen, a settings row and
// /todo.
var Todos = &Plugin{
	Private:     true,
	ID:          "todos",
	Name:        "待办",
	Description: "你的待办清单:助手、插件和你自己添加的待办都在这里。",
	Version:     "0.1.0",
	Icon:        "check",
	Abilities:   []string{"todos"},
	I18n: I18n{
		En: EnText{
			Name:        "To-dos",
			Description: "Your to-do list: what the assistant, plugins and you added, in one place.",
			Tools: map[string]ToolText{
				"list": {Title: "List to-dos"}, "add": {Title: "Add a to-do"}, "update": {Title: "Change a to-do"},
				"done": {Title: "Tick off a to-do"}, "remove": {Title: "Delete a to-do"},
			},
			Widgets:     map[string]UIText{"open": {Title: "To-dos", Description: "Open to-dos, soonest due first."}},
			Screens:     map[string]UIText{"main": {Title: "To-dos"}},
			Settings:    map[string]SettingText{"main": {Title: "To-dos", Subtitle: "Your to-do list"}},
			Commands:    map[string]CommandText{"todo": {Description: "Add a to-do", ArgHint: "what to do, and when", Prompt: "Add a to-do: {{input}}", Aliases: []string{"task"}}},
			DataSources: map[string]UIText{"open": {Title: "Open to-dos"}},
		},
		Strings: todosStrings,
	},
	Instructions: `待办:用户说"提醒我/记得/要做"某事时用 todos__add(due 用北京时间 YYYY-MM-DD HH:mm);问还有什么没做时用 todos__list {done:false};做完了用 todos__done。`,
	Context:      todosContext,
	DataSources:  []DataSource{{Name: "open", Title: "未完成的待办", Tool: "list", Args: map[string]any{"done": false, "limit": 20}, TTL: time.Minute}},
	Widgets:      []UI{{Name: "open", Document: todosWidget}},
	Screens:      []UI{{Name: "main", Document: todosScreen}},
	Settings:     []Setting{{Screen: "main", Title: "待办", Subtitle: "待办清单", Icon: "check"}},
	Commands: []Command{{Name: "todo", Description: "添加待办", ArgHint: "要做什么、什么时候", Aliases: []string{"待办"},
		Prompt: "添加待办:{{input}}"}},
	Tools: []*Tool{
		{Name: "list", Title: "查看待办", Effect: plugin.EffectRead, Run: Func(todosList),
			Description: "The user's to-dos (from every plugin and the user): open ones first, then by due time. Each has id, title, notes, due (Unix ms or null), done, source (the plugin that added it)."},
		{Name: "add", Title: "添加待办", Effect: plugin.EffectWrite, Run: Func(todosAdd),
			Description: "Add a to-do for the user. Give due in Beijing time when the user names one."},
		{Name: "update", Title: "修改待办", Effect: plugin.EffectWrite, Run: Func(todosUpdate),
			Description: "Change a to-do's title, notes or due time (an empty due clears it)."},
		{Name: "done", Title: "完成待办", Effect: plugin.EffectWrite, Run: Func(todosDone),
			Description: "Mark a to-do done (or open again with done: false)."},
		{Name: "remove", Title: "删除待办", Effect: plugin.EffectWrite, Run: Func(todosRemove),
			Description: "Delete a to-do. Prefer todos__done for finished ones; delete only when the user asks."},
	},
}
