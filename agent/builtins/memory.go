package builtins

import (
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/builtin"
	"github.com/pkuinfo/harness/plugin"
)

// MaxMemories is how many memories are kept; remembering more forgets the
// oldest.
const MaxMemories = 200

// Memory is the memory built-in: what the person asked the assistant to
// remember, given back to the model before each turn as data.
var Memory = &builtin.Plugin{
	Private: true,
	ID:      "memory", Name: "记忆", Description: "助手替你记住的事:偏好、习惯和常用信息。", Version: "1.0.0", Icon: "sparkles",
	Instructions: "When the user asks you to remember something about them, call memory__remember with one short fact. " +
		"Memories that bear on the message arrive in a <context source=\"memory\"> block; use memory__recall to search the rest and memory__forget when asked to forget.",
	Context: memoryContext,
	I18n: builtin.I18n{En: builtin.EnText{Name: "Memory", Description: "What the assistant remembers for you: preferences, habits and details you use often.",
		Tools: map[string]builtin.ToolText{"remember": {Title: "Remember"}, "recall": {Title: "Recall"}, "forget": {Title: "Forget"}}}},
	DefaultModes: map[plugin.Effect]host.Mode{plugin.EffectWrite: host.ModeAuto},
	Tools: []*builtin.Tool{
		{Name: "remember", Title: "记住", Effect: plugin.EffectWrite, Run: builtin.Func(remember),
			Description: "Use when the user asks you to remember something (a preference, their dorm, their student type). Saves one short fact. Returns { id, text, saved }."},
		{Name: "recall", Title: "回想", Effect: plugin.EffectRead, Run: builtin.Func(recall),
			Description: "Use to search what the user asked you to remember. Returns { memories: [{ id, text, saved }] }, best matches first; without query, the newest."},
		{Name: "forget", Title: "忘记", Effect: plugin.EffectWrite, Run: builtin.Func(forget),
			Description: "Use when the user asks you to forget something: give the id from recall or the context block. Returns { forgotten }."},
	},
}

// MemoryItem is one remembered fact.
type MemoryItem struct {
	ID    string `json:"id"`
	Text  string `json:"text"`
	Saved string `json:"saved"` // Beijing time "YYYY-MM-DD HH:mm"
}

// RememberInput is memory.remember's input.
type RememberInput struct {
	Text string `json:"text" jsonschema:"one short fact, in the user's words" harness:"min=1,max=500,trim"`
}

// RecallInput is memory.recall's input.
type RecallInput struct {
	Query string `json:"query,omitempty" jsonschema:"words to look for; empty lists the newest" harness:"max=200,trim"`
	Limit int    `json:"limit,omitempty" jsonschema:"at most this many, 1-50; default 10" harness:"min=1,max=50,default=10"`
}

// ForgetInput is memory.forget's input.
type ForgetInput struct {
	ID string `json:"id" jsonschema:"the memory's id" harness:"min=1,max=40,trim"`
}

const memoryKey = "memories"

var beijing = time.FixedZone("CST", 8*3600)

func loadMemories(c *builtin.Context) ([]MemoryItem, error) {
	var list []MemoryItem
	if _, err := c.KV.Get(memoryKey, &list); err != nil {
		return nil, err
	}
	return list, nil
}

func remember(c *builtin.Context, in RememberInput) (MemoryItem, error) {
	list, err := loadMemories(c)
	if err != nil {
		return MemoryItem{}, err
	}
	for _, m := range list {
		if m.Text == in.Text {
			return m, nil // already remembered
		}
	}
	m := MemoryItem{ID: fmt.Sprintf("m%d", c.Now.UnixMilli()), Text: in.Text, Saved: c.Now.In(beijing).Format("2006-01-02 15:04")}
	for _, old := range list {
		if old.ID == m.ID {
			m.ID += fmt.Sprintf("-%d", len(list))
		}
	}
	list = append(list, m)
	if len(list) > MaxMemories {
		list = list[len(list)-MaxMemories:]
	}
	return m, c.KV.Set(memoryKey, list)
}

// terms are the words of s for matching: runs of letters or digits,
// lower-cased, and every Han character on its own (Chinese has no spaces).
func terms(s string) map[string]bool {
	out := map[string]bool{}
	var w strings.Builder
	flush := func() {
		if w.Len() > 1 {
			out[w.String()] = true
		}
		w.Reset()
	}
	for _, r := range strings.ToLower(s) {
		switch {
		case unicode.Is(unicode.Han, r):
			flush()
			out[string(r)] = true
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			w.WriteRune(r)
		default:
			flush()
		}
	}
	flush()
	return out
}

// rank returns the memories sharing terms with query, best first (newest
// first among equals); an empty query ranks by age.
func rank(list []MemoryItem, query string, limit int) []MemoryItem {
	q := terms(query)
	type scored struct {
		m     MemoryItem
		score int
		i     int
	}
	var s []scored
	for i, m := range list {
		n := 0
		for t := range terms(m.Text) {
			if q[t] {
				n++
			}
		}
		if len(q) == 0 || n > 0 {
			s = append(s, scored{m, n, i})
		}
	}
	sort.Slice(s, func(a, b int) bool {
		if s[a].score != s[b].score {
			return s[a].score > s[b].score
		}
		return s[a].i > s[b].i
	})
	out := []MemoryItem{}
	for i := 0; i < len(s) && i < limit; i++ {
		out = append(out, s[i].m)
	}
	return out
}

// MemoriesResult is memory.recall's result.
type MemoriesResult struct {
	Memories []MemoryItem `json:"memories"`
}

func recall(c *builtin.Context, in RecallInput) (MemoriesResult, error) {
	list, err := loadMemories(c)
	if err != nil {
		return MemoriesResult{}, err
	}
	return MemoriesResult{Memories: rank(list, in.Query, in.Limit)}, nil
}

func forget(c *builtin.Context, in ForgetInput) (map[string]any, error) {
	list, err := loadMemories(c)
	if err != nil {
		return nil, err
	}
	for i, m := range list {
		if m.ID == in.ID {
			list = append(list[:i], list[i+1:]...)
			return map[string]any{"forgotten": m.Text}, c.KV.Set(memoryKey, list)
		}
	}
	return nil, builtin.Errorf("没有编号为 %s 的记忆", in.ID)
}

// memoryContext gives the model the memories that bear on the message:
// all of them while there are at most 10, else the 10 best matches.
func memoryContext(c *builtin.Context, query string) (string, error) {
	list, err := loadMemories(c)
	if err != nil || len(list) == 0 {
		return "", err
	}
	picked := list
	if len(list) > 10 {
		picked = rank(list, query, 10)
	}
	var b strings.Builder
	b.WriteString("What the user asked you to remember:")
	for _, m := range picked {
		fmt.Fprintf(&b, "\n- [%s] %s (saved %s)", m.ID, m.Text, m.Saved)
	}
	return b.String(), nil
}
