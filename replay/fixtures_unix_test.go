//go:build unix

package replay

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/text/encoding/simplifiedchinese"
)

// fixturePlugin writes a plugin whose tool fetches a page as text, and a
// test answering it from tests/fixtures/page.html; place makes that file.
func fixturePlugin(t *testing.T, expect string, place func(path string) error) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "page")
	files := map[string]string{
		"PLUGIN.md": `---
spec: 1
id: page
name: 网页
description: A plugin for the recorded-test runner's fixture tests.
version: 1.0.0
author: pkuinfo
network: [www.example.com]
tools:
  read: tools/read.yaml
i18n:
  en:
    name: Page
    description: A plugin for the recorded-test runner's fixture tests.
    tools: { read: { title: Read } }
---
Use page__read.
`,
		"tools/read.yaml": `title: 读取
description: Reads the page's title.
effect: read
steps:
  - let: doc
    request: { url: https://www.example.com/index.htm, as: html }
return: "htmlText(first(doc, 'title'))"
`,
		"tests/read.yaml": `tool: read
responses:
  - match: index.htm
    file: fixtures/page.html
expect: ` + expect + "\n",
	}
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "tests", "fixtures"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := place(filepath.Join(dir, "tests", "fixtures", "page.html")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runWithin runs the plugin's tests and fails if they take over 10 s (a
// hang); it returns the text report.
func runWithin(t *testing.T, dir string) string {
	t.Helper()
	done := make(chan string, 1)
	go func() {
		rep, err := RunDir(context.Background(), dir)
		var b bytes.Buffer
		if err == nil {
			err = rep.WriteText(&b)
		}
		if err != nil {
			b.WriteString("error: " + err.Error())
		}
		done <- b.String()
	}()
	select {
	case got := <-done:
		return got
	case <-time.After(10 * time.Second):
		t.Fatal("the recorded test hangs")
		return ""
	}
}

// TestFixtureFiles tries the fixture reader as an attacker would, with a
// fixture that is a link to a secret outside the folder (nothing of it is
// printed), a FIFO (a clear error, no hang), a link to /dev/zero (refused,
// not read), or a sparse 8 GB file (refused from its size).
func TestFixtureFiles(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "ci.env")
	if err := os.WriteFile(outside, []byte("<title>CI_SECRET=hunter2</title>"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		place func(string) error
		want  string
	}{
		{"link out", func(p string) error { return os.Symlink(outside, p) }, `responses[0].file: cannot read "fixtures/page.html": path escapes from parent`},
		{"link to dev zero", func(p string) error { return os.Symlink("/dev/zero", p) }, `responses[0].file: cannot read "fixtures/page.html": path escapes from parent`},
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o644) }, `responses[0].file: cannot read "fixtures/page.html": not a regular file (it is a named pipe)`},
		{"huge", func(p string) error {
			f, err := os.Create(p)
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Truncate(8 << 30)
		}, `responses[0].file: cannot read "fixtures/page.html": file too large: 8589934592 bytes, the limit is 4194304`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := runWithin(t, fixturePlugin(t, "x", tc.place))
			if strings.Contains(got, "hunter2") {
				t.Fatalf("the secret leaked:\n%s", got)
			}
			if !strings.Contains(got, "FAIL page/read") || !strings.Contains(got, tc.want) {
				t.Errorf("report:\n%s\nwant a failure saying %s", got, tc.want)
			}
		})
	}
}

// TestFixtureMetaCharset checks that a fixture gets only the headers its
// test gives: a GB2312 page that declares its charset only in
// <meta http-equiv> replays as the live site reads, with no Content-Type
// guessed from the ".html" name (which would say UTF-8 and garble it).
func TestFixtureMetaCharset(t *testing.T) {
	page, err := simplifiedchinese.GBK.NewEncoder().String(`<html><head>
<meta http-equiv="Content-Type" content="text/html; charset=gb2312">
<title>北京大学教务部通知</title></head><body><p>选课</p></body></html>`)
	if err != nil {
		t.Fatal(err)
	}
	dir := fixturePlugin(t, "北京大学教务部通知", func(p string) error { return os.WriteFile(p, []byte(page), 0o644) })
	if got := runWithin(t, dir); !strings.HasPrefix(got, "ok   page/read") {
		t.Errorf("report:\n%s", got)
	}
}
