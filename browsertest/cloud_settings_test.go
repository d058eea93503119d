package browsertest

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

const cloudNotes = `---
spec: 1
id: cloud-notes
name: 云笔记
description: 把笔记加密后存到云端。
version: 1.0.0
author: tester
cloud:
  protocol: 1
  uses: [store]
  e2e: true
  disclosure:
    zh: ['笔记加密后保存在云端服务器', '服务器能看到你保存的时间']
    en: ['Encrypted notes are kept on the cloud server', 'The server sees when you save']
tools:
  hello: tools/hello.yaml
i18n:
  en: { name: Cloud notes, description: Keeps notes encrypted in the cloud., tools: { hello: { title: Hello } } }
---
`

// TestCloudSettings walks Settings → Cloud against a reference server started here: test
// connection shows what the provider offers, saving it makes the plugin's consent panel show the
// provider host, the disclosure line by line and the E2E badge, and the allow switch records
// the consent the host API then reports.
func TestCloudSettings(t *testing.T) {
	ctx := browser(t)
	h := startHarness(t)
	env := append(os.Environ(), "HARNESS_KEYRING=off")
	cloud := exec.Command(h.bin, "cloud", "serve", "--addr", "127.0.0.1:0", "--quiet", "--difficulty", "4", "--db", filepath.Join(t.TempDir(), "cloud.db"))
	cloud.Env = env
	out, _ := cloud.StdoutPipe()
	if err := cloud.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cloud.Process.Kill(); cloud.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	m := regexp.MustCompile(`serving (http://\S+)`).FindStringSubmatch(line)
	if err != nil || m == nil {
		t.Fatalf("cloud serve: %q %v", line, err)
	}
	provider := m[1]

	dir := filepath.Join(t.TempDir(), "cloud-notes")
	os.MkdirAll(filepath.Join(dir, "tools"), 0o755)
	os.WriteFile(filepath.Join(dir, "PLUGIN.md"), []byte(cloudNotes), 0o644)
	os.WriteFile(filepath.Join(dir, "tools", "hello.yaml"), []byte("title: 你好\ndescription: Hi.\neffect: read\nreturn: \"'hi'\"\n"), 0o644)
	inst := exec.Command(h.bin, "plugins", "install", "--yes", "--data", h.data, dir)
	inst.Env = env
	if b, err := inst.CombinedOutput(); err != nil {
		t.Fatalf("install: %v\n%s", err, b)
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/settings"),
		chromedp.WaitVisible(chromedp.ID(`#cloud-url`)),
		chromedp.SendKeys(chromedp.ID(`#cloud-url`), provider),
		chromedp.Click(chromedp.CSS(`#cloud form button[type=button]`)),
		chromedp.WaitVisible(chromedp.CSS(`#cloud form + p.detail`)),
	); err != nil {
		t.Fatal(err)
	}
	if s := text(t, ctx, `#cloud form + p.detail`); !strings.Contains(s, "store, channels") {
		t.Errorf("test connection shows %q", s)
	}
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#cloud form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`.cloud-panel[data-plugin="cloud-notes"] input[type=checkbox]:not([disabled])`)),
	); err != nil {
		t.Fatal(err)
	}
	// Every plugin that uses Cloud has its panel (card-share, built in, among them); this one is cloud-notes'.
	host := strings.TrimPrefix(provider, "http://")
	panel := text(t, ctx, `.cloud-panel[data-plugin="cloud-notes"]`)
	for _, want := range []string{"cloud-notes", "服务商 " + host, "端到端加密", "笔记加密后保存在云端服务器", "服务器能看到你保存的时间", "用到的服务：store"} {
		if !strings.Contains(panel, want) {
			t.Errorf("the consent panel lacks %q: %q", want, panel)
		}
	}
	// The panel names the plugin as the person knows it (its id in small print) and says sizes
	// in units, not raw bytes.
	if s := text(t, ctx, `.cloud-panel[data-plugin="cloud-notes"] .name`); !strings.HasPrefix(s, "云笔记") {
		t.Errorf("the consent panel is headed %q, want the plugin's name 云笔记 first", s)
	}
	if s := text(t, ctx, `.cloud-panel[data-plugin="cloud-notes"] .plugin-id`); s != "cloud-notes" {
		t.Errorf("the consent panel's id line %q", s)
	}
	if !strings.Contains(panel, "0 B / 1 MB") || strings.Contains(panel, "字节") {
		t.Errorf("the consent panel's quota is not in units: %q", panel)
	}
	if s := text(t, ctx, `.cloud-panel[data-plugin="card-share"] .name`); !strings.HasPrefix(s, "付款码共享") {
		t.Errorf("card-share's consent panel is headed %q, want its name", s)
	}
	shoot(t, ctx, "settings-cloud")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`.cloud-panel[data-plugin="cloud-notes"] input[type=checkbox]`))); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		rep := h.api(t, "GET", "/v1/cloud/plugins/cloud-notes/consent", "")
		if rep["consented"] == true {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the switch did not record the consent: %v", rep)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`.cloud-panel[data-plugin="cloud-notes"] input[type=checkbox]:checked`))); err != nil {
		t.Fatalf("the switch does not show the consent: %v", err)
	}
	shoot(t, ctx, "settings-cloud-allowed")

	// The plugin's own page shows the same panel, allowed.
	if err := chromedp.Do(ctx, chromedp.Navigate(h.url+"/plugins/cloud-notes"),
		chromedp.WaitVisible(chromedp.CSS(`#pcloud-h`)),
		chromedp.WaitVisible(chromedp.CSS(`.cloud-panel input[type=checkbox]:checked`)),
	); err != nil {
		t.Fatal(err)
	}
	if s := text(t, ctx, `.cloud-panel`); !strings.Contains(s, "笔记加密后保存在云端服务器") {
		t.Errorf("the plugin page's Cloud block reads %q", s)
	}
	shoot(t, ctx, "plugin-cloud")
}
