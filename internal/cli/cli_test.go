package cli

import (
	"bytes"
	"flag"
	"regexp"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/internal/msg"
	"github.com/pkuinfo/harness/plugin"
)

// TestEveryCommandHasHelp walks the registry: every command answers --help, -h and
// `harness help PATH` on stdout with exit 0, without running, and every flag its usage line
// names is one its Flags defines (so --help lists it).
func TestEveryCommandHasHelp(t *testing.T) {
	cmds := Commands()
	if len(cmds) < 20 {
		t.Fatalf("only %d commands registered", len(cmds))
	}
	flagRE := regexp.MustCompile(`--([a-z][a-z0-9-]*)`)
	for _, c := range cmds {
		words := strings.Fields(c.Path)
		for _, args := range [][]string{
			append(append([]string{}, words...), "--help"),
			append(append([]string{}, words...), "-h"),
			append([]string{"help"}, words...),
			append(append([]string{}, words...), "x", "--help"), // after a positional argument too
		} {
			var out, errb bytes.Buffer
			code := Main(args, strings.NewReader(""), &out, &errb)
			if code != ExitOK || errb.Len() > 0 {
				t.Errorf("harness %s: exit %d, stderr %q", strings.Join(args, " "), code, errb.String())
				continue
			}
			if !strings.HasPrefix(out.String(), "usage: harness "+c.Path) || !strings.Contains(out.String(), c.Summary) {
				t.Errorf("harness %s: help is %q", strings.Join(args, " "), out.String())
			}
		}
		if c.Summary == "" {
			t.Errorf("%s: no summary", c.Path)
		}
		defined := map[string]bool{}
		if c.Flags != nil {
			fs := flag.NewFlagSet(c.Path, flag.ContinueOnError)
			c.Flags(fs)
			fs.VisitAll(func(f *flag.Flag) { defined[f.Name] = true })
		}
		for _, m := range flagRE.FindAllStringSubmatch(c.Usage, -1) {
			if !defined[m[1]] {
				t.Errorf("%s: usage names --%s but Flags does not define it (--help would not list it)", c.Path, m[1])
			}
		}
	}
}

// TestGroupHelp: the first words of commands (`plugins`, `plugin`, `cloud`) list their
// commands on --help (exit 0) and on their own (stderr, exit 2).
func TestGroupHelp(t *testing.T) {
	groups := map[string]bool{}
	for _, c := range Commands() {
		words := strings.Fields(c.Path)
		for i := 1; i < len(words); i++ {
			groups[strings.Join(words[:i], " ")] = true
		}
	}
	for _, g := range []string{"plugin", "plugins", "cloud", "campus", "otp", "tool"} {
		if !groups[g] {
			t.Errorf("no group %q", g)
		}
	}
	for g := range groups {
		var out, errb bytes.Buffer
		if c, n := lookup(strings.Fields(g)); c != nil && n == len(strings.Fields(g)) {
			// A command that is also a group (chat): its help lists its subcommands.
			if code := Main(append(strings.Fields(g), "--help"), nil, &out, &errb); code != ExitOK ||
				!strings.HasPrefix(out.String(), "usage: harness "+g+" ") || !strings.Contains(out.String(), "\ncommands:\n  harness "+g+" ") {
				t.Errorf("harness %s --help: exit %d, %q %q", g, code, out.String(), errb.String())
			}
			continue
		}
		if code := Main(append(strings.Fields(g), "--help"), nil, &out, &errb); code != ExitOK ||
			!strings.HasPrefix(out.String(), "usage: harness "+g+" COMMAND") {
			t.Errorf("harness %s --help: exit %d, %q %q", g, code, out.String(), errb.String())
		}
		out.Reset()
		errb.Reset()
		if code := Main(strings.Fields(g), nil, &out, &errb); code != ExitUsage || out.Len() > 0 ||
			!strings.Contains(errb.String(), "a command is missing") {
			t.Errorf("harness %s: exit %d, %q %q", g, code, out.String(), errb.String())
		}
	}
}

func TestSuggest(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"plugin", "install", "x"}, "plugins install"},
		{[]string{"plugins", "instal"}, "plugins install"},
		{[]string{"plugins", "lst"}, "plugins list"},
		{[]string{"plugin", "tset", "dir"}, "plugin test"},
		{[]string{"serv"}, "serve"},
		{[]string{"versoin"}, "version"},
		{[]string{"cloud", "srve"}, "cloud serve"},
		{[]string{"plugns"}, "plugins"},
		{[]string{"campsu"}, "campus"},
		{[]string{"plugni", "validate"}, "plugin validate"},
		{[]string{"frobnicate"}, ""},
		{[]string{"plugins", "xyzzyq"}, ""},
	} {
		if got := Suggest(tc.args); got != tc.want {
			t.Errorf("Suggest(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"kitten", "sitting", 3}, {"plugin", "plugins", 1}, {"flaw", "lawn", 2}} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestWidenText: every kind of host.Widening is worded in both languages, none falls back to
// the English of host.Widening.String in a Chinese run.
func TestWidenText(t *testing.T) {
	ws := []host.Widening{
		{Kind: host.WidenCampus, Name: "card"}, {Kind: host.WidenWebsite, Name: "a.example"},
		{Kind: host.WidenAbility, Name: "todos"}, {Kind: host.WidenCloud, Name: "store"},
		{Kind: host.WidenRemote, Name: "https://r.example/mcp"}, {Kind: host.WidenNewTool, Name: "pay", To: plugin.EffectMoney},
		{Kind: host.WidenEffect, Name: "now", From: plugin.EffectRead, To: plugin.EffectWrite}, {Kind: host.WidenUserOnly, Name: "code"},
	}
	var en []string
	for _, w := range ws {
		en = append(en, w.String())
	}
	if got := widenText(msg.En, ws); got != strings.Join(en, "; ") {
		t.Errorf("en: %q\nwant %q", got, strings.Join(en, "; "))
	}
	want := "新的校园服务 card；新的网站 a.example；新的应用功能 todos；新的云服务 store；远程服务器 https://r.example/mcp；" +
		"新的花钱类工具 pay；工具 now：读取 → 修改；工具 code 不再只限你本人使用（userOnly）"
	if got := widenText(msg.ZhHans, ws); got != want {
		t.Errorf("zh: %q\nwant %q", got, want)
	}
}
