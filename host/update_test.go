package host

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

const link = "https://github.com/student/demo-repo/tree/main/demo"

func TestUpdateCases(t *testing.T) {
	tests := []struct {
		name    string
		next    map[string]string
		want    UpdateOutcome
		version string // the version in use afterwards
	}{
		{"same hash", demo("1.0.0"),
			UpdateOutcome{ID: "demo", Status: StatusCurrent, From: "1.0.0"}, "1.0.0"},
		{"content changed, same version", demo("1.0.0", [3]string{"tools/hello.yaml", "'你好,'", "'您好,'"}),
			UpdateOutcome{ID: "demo", Status: StatusApplied, From: "1.0.0", To: "1.0.0", Note: "content changed, same version 1.0.0"}, "1.0.0"},
		{"content changed", demo("1.3.0", [3]string{"tools/hello.yaml", "'你好,'", "'您好,'"}),
			UpdateOutcome{ID: "demo", Status: StatusApplied, From: "1.0.0", To: "1.3.0", Note: "updated 1.0.0 → 1.3.0"}, "1.3.0"},
		{"new read tool", demo("1.1.0", [3]string{"PLUGIN.md", "  hello: tools/hello.yaml", "  hello: tools/hello.yaml\n  hi: tools/hi.yaml"},
			[3]string{"tools/hi.yaml", "", "title: 嗨\ndescription: Says hi.\neffect: read\nreturn: \"'hi'\"\n"}),
			UpdateOutcome{ID: "demo", Status: StatusApplied, From: "1.0.0", To: "1.1.0", Note: "updated 1.0.0 → 1.1.0"}, "1.1.0"},
		{"narrower network", demo("1.0.1", [3]string{"PLUGIN.md", "network: [api.example.com]", "network: [api.example.com]\nabilities: []"}),
			UpdateOutcome{ID: "demo", Status: StatusApplied, From: "1.0.0", To: "1.0.1", Note: "updated 1.0.0 → 1.0.1"}, "1.0.1"},
		{"new campus service beside a website: the Community rule refuses it", demo("2.0.0", [3]string{"PLUGIN.md", "network: [api.example.com]", "network: [api.example.com]\ncampus: [card]"}),
			UpdateOutcome{ID: "demo", Status: StatusFailed, From: "1.0.0"}, "1.0.0"},
		{"new host", demo("2.0.0", [3]string{"PLUGIN.md", "network: [api.example.com]", "network: [api.example.com, '*.example.net']"}),
			UpdateOutcome{ID: "demo", Status: StatusHeld, From: "1.0.0", To: "2.0.0", Widened: []string{"new website *.example.net"},
				Note: "update to 2.0.0 waits for your review: new website *.example.net"}, "1.0.0"},
		{"new ability", demo("2.0.0", [3]string{"PLUGIN.md", "network: [api.example.com]", "network: [api.example.com]\nabilities: [crypto]"}),
			UpdateOutcome{ID: "demo", Status: StatusHeld, From: "1.0.0", To: "2.0.0", Widened: []string{"new app feature crypto"},
				Note: "update to 2.0.0 waits for your review: new app feature crypto"}, "1.0.0"},
		{"stronger effect", demo("2.0.0", [3]string{"tools/note.yaml", "effect: write", "effect: money"}),
			UpdateOutcome{ID: "demo", Status: StatusHeld, From: "1.0.0", To: "2.0.0", Widened: []string{"tool note: write → money"},
				Note: "update to 2.0.0 waits for your review: tool note: write → money"}, "1.0.0"},
		{"new write tool", demo("2.0.0", [3]string{"PLUGIN.md", "  hello: tools/hello.yaml", "  hello: tools/hello.yaml\n  note2: tools/note2.yaml"},
			[3]string{"tools/note2.yaml", "", "title: 笔记\ndescription: Writes.\neffect: write\nsteps:\n  - kv: set\n    key: a\n    value: \"1\"\n"}),
			UpdateOutcome{ID: "demo", Status: StatusHeld, From: "1.0.0", To: "2.0.0", Widened: []string{"new write tool note2"},
				Note: "update to 2.0.0 waits for your review: new write tool note2"}, "1.0.0"},
		{"not valid", demo("2.0.0", [3]string{"tools/note.yaml", "effect: write", "effect: loud"}),
			UpdateOutcome{ID: "demo", Status: StatusFailed, From: "1.0.0"}, "1.0.0"},
		{"another id", demo("2.0.0", [3]string{"PLUGIN.md", "id: demo", "id: other"}),
			UpdateOutcome{ID: "demo", Status: StatusMismatch, From: "1.0.0", Error: `the source now serves plugin "other", not "demo"`}, "1.0.0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, demo("1.0.0"))
			ctx := context.Background()
			e.install(t, link)
			e.site.set(tc.next)
			got, err := e.h.Update(ctx, "demo")
			if err != nil {
				t.Fatal(err)
			}
			if tc.want.Status == StatusFailed {
				if got.Error == "" {
					t.Fatal("a failed update has no error")
				}
				got.Error = ""
			}
			// Widenings is Widened as data: the same phrases, in order.
			var phrases []string
			for _, w := range got.Widenings {
				phrases = append(phrases, w.String())
			}
			if !reflect.DeepEqual(phrases, got.Widened) {
				t.Fatalf("Widenings %v, Widened %v", phrases, got.Widened)
			}
			got.Widenings = nil
			if !reflect.DeepEqual(*got, tc.want) {
				t.Fatalf("Update = %+v\nwant     %+v", *got, tc.want)
			}
			in, _ := e.h.Show(ctx, "demo")
			if in.Version != tc.version {
				t.Fatalf("version in use %s, want %s", in.Version, tc.version)
			}
			if tc.want.Status == StatusHeld {
				if in.Held == nil || !reflect.DeepEqual(in.Held.Widened, tc.want.Widened) {
					t.Fatalf("held = %+v", in.Held)
				}
				// Checking again holds the same update once.
				again, _ := e.h.Update(ctx, "demo")
				if again.Status != StatusHeld {
					t.Fatalf("second check: %+v", again)
				}
				// The author withdraws the wider version: the held update goes.
				e.site.set(demo("1.0.0"))
				if o, _ := e.h.Update(ctx, "demo"); o.Status != StatusCurrent {
					t.Fatalf("withdrawn: %+v", o)
				}
				if in, _ := e.h.Show(ctx, "demo"); in.Held != nil {
					t.Fatalf("a withdrawn update is still held: %+v", in.Held)
				}
				e.site.set(tc.next)
				if o, _ := e.h.Update(ctx, "demo"); o.Status != StatusHeld {
					t.Fatalf("held again: %+v", o)
				}
				rv, widened, err := e.h.HeldReview(ctx, "demo")
				if err != nil || rv.Version != "2.0.0" || rv.Installed != "1.0.0" || !reflect.DeepEqual(widened, tc.want.Widened) {
					t.Fatalf("held review = %+v %q, %v", rv, widened, err)
				}
				if _, err := e.h.AcceptUpdate(ctx, "demo", "sha256:other"); err == nil || !strings.Contains(err.Error(), "review it again") {
					t.Fatalf("accept with another hash: %v", err)
				}
				acc, err := e.h.AcceptUpdate(ctx, "demo", rv.Hash)
				if err != nil || acc.Note != "updated 1.0.0 → 2.0.0" {
					t.Fatalf("accept = %+v, %v", acc, err)
				}
				in, _ = e.h.Show(ctx, "demo")
				if in.Version != "2.0.0" || in.Held != nil || in.Previous != "1.0.0" {
					t.Fatalf("after accept: %+v", in)
				}
			}
		})
	}
}

func TestRollback(t *testing.T) {
	e := newEnv(t, demo("1.0.0"))
	ctx := context.Background()
	e.install(t, link)
	_, err := e.h.Rollback(ctx, "demo")
	var c *Conflict
	if !errors.As(err, &c) || err.Error() != "host: plugin demo has no previous version to roll back to: nothing older than 1.0.0 is kept" {
		t.Fatalf("rollback without previous: %v", err)
	}
	if _, err := e.h.Rollforward(ctx, "demo"); !errors.As(err, &c) || !strings.Contains(err.Error(), "no newer version to roll forward to: 1.0.0 is the newest kept") {
		t.Fatalf("rollforward without a rollback: %v", err)
	}
	e.site.set(demo("1.1.0", [3]string{"tools/hello.yaml", "'你好,'", "'您好,'"}))
	if o, _ := e.h.Update(ctx, "demo"); o.Status != StatusApplied {
		t.Fatalf("update: %+v", o)
	}
	if v, _ := e.h.RunTool(ctx, ActorUser, "demo", "hello", nil); v != "您好,世界" {
		t.Fatalf("after update hello = %v", v)
	}
	roles := func() string {
		vs, err := e.h.Versions(ctx, "demo")
		if err != nil {
			t.Fatal(err)
		}
		var parts []string
		for _, v := range vs {
			parts = append(parts, v.Role+"="+v.Version)
		}
		return strings.Join(parts, " ")
	}
	if got := roles(); got != "current=1.1.0 previous=1.0.0" {
		t.Fatalf("versions after update: %s", got)
	}
	o, err := e.h.Rollback(ctx, "demo")
	if err != nil || !reflect.DeepEqual(*o, UpdateOutcome{ID: "demo", Status: StatusApplied, From: "1.1.0", To: "1.0.0", Note: "rolled back 1.1.0 → 1.0.0"}) {
		t.Fatalf("rollback = %+v, %v", o, err)
	}
	if v, _ := e.h.RunTool(ctx, ActorUser, "demo", "hello", nil); v != "你好,世界" {
		t.Fatalf("after rollback hello = %v", v)
	}
	in, _ := e.h.Show(ctx, "demo")
	if in.Version != "1.0.0" || in.Previous != "" || in.Forward != "1.1.0" || in.Note != "rolled back 1.1.0 → 1.0.0" {
		t.Fatalf("after rollback: %+v", in)
	}
	if got := roles(); got != "newer=1.1.0 current=1.0.0" {
		t.Fatalf("versions after rollback: %s", got)
	}
	// A second rollback does not go forward again: there is nothing older.
	if _, err := e.h.Rollback(ctx, "demo"); !errors.As(err, &c) ||
		err.Error() != "host: plugin demo has no previous version to roll back to: nothing older than 1.0.0 is kept (1.1.0 is newer: harness plugins rollforward demo)" {
		t.Fatalf("second rollback: %v", err)
	}
	o, err = e.h.Rollforward(ctx, "demo")
	if err != nil || o.Note != "rolled forward 1.0.0 → 1.1.0" || o.To != "1.1.0" {
		t.Fatalf("rollforward = %+v, %v", o, err)
	}
	if v, _ := e.h.RunTool(ctx, ActorUser, "demo", "hello", nil); v != "您好,世界" {
		t.Fatalf("after rollforward hello = %v", v)
	}
	if got := roles(); got != "current=1.1.0 previous=1.0.0" {
		t.Fatalf("versions after rollforward: %s", got)
	}
	e.h.Rollback(ctx, "demo")
	// A third version prunes the oldest: only current and previous stay.
	e.site.set(demo("1.2.0", [3]string{"tools/hello.yaml", "'你好,'", "'嗨,'"}))
	e.h.Update(ctx, "demo")
	var n int
	e.db.SQL.QueryRow(`SELECT COUNT(*) FROM plugin_versions WHERE plugin = 'demo'`).Scan(&n)
	if n != 2 {
		t.Fatalf("%d versions kept, want 2", n)
	}
	if _, err := e.h.AcceptUpdate(ctx, "demo", ""); !errors.As(err, &c) {
		t.Fatalf("accept without held: %v", err)
	}
}

func TestAutoUpdate(t *testing.T) {
	e := newEnv(t, demo("1.0.0"))
	ctx := context.Background()
	e.install(t, link)
	e.site.set(demo("1.1.0", [3]string{"tools/hello.yaml", "'你好,'", "'您好,'"}))
	status := func() string {
		out, err := e.h.AutoUpdate(ctx)
		if err != nil || len(out) != 1 {
			t.Fatalf("AutoUpdate = %v, %v", out, err)
		}
		return out[0].Status
	}
	if s := status(); s != StatusSkipped {
		t.Fatalf("checked at install, a check an hour later: %s", s)
	}
	e.clock.add(25 * time.Hour)
	e.h.SetAutoUpdate(ctx, "demo", false)
	if s := status(); s != StatusSkipped {
		t.Fatalf("auto-update off: %s", s)
	}
	e.h.SetAutoUpdate(ctx, "demo", true)
	if s := status(); s != StatusApplied {
		t.Fatalf("a day later: %s", s)
	}
	e.clock.add(time.Hour)
	if s := status(); s != StatusSkipped {
		t.Fatalf("an hour after the check: %s", s)
	}
}

func TestWidenedHosts(t *testing.T) {
	tests := []struct {
		old, next []string
		want      []string
	}{
		{[]string{"a.example.com"}, []string{"a.example.com"}, nil},
		{[]string{"*.example.com"}, []string{"a.example.com", "*.b.example.com"}, nil},
		{[]string{"*.example.com"}, []string{"example.com"}, []string{"new website example.com"}},
		{[]string{"example.com"}, []string{"*.example.com"}, []string{"new website *.example.com"}},
		{[]string{"a.example.com"}, []string{"*.a.example.com"}, []string{"new website *.a.example.com"}},
	}
	for _, tc := range tests {
		got := Widened(Declarations{Network: tc.old}, Declarations{Network: tc.next})
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%v → %v: %q, want %q", tc.old, tc.next, got, tc.want)
		}
	}
}

// TestKilledDuringUpdate runs an update in a child process, SIGKILLs it
// inside the update's transaction, and checks that the previous version is
// intact and the database consistent.
func TestKilledDuringUpdate(t *testing.T) {
	if os.Getenv("HOST_KILL_HELPER") != "" {
		killHelper()
		return
	}
	dir := t.TempDir()
	e := newEnvIn(t, dir, demo("1.0.0"))
	ctx := context.Background()
	before := e.install(t, link)
	e.db.Close()

	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledDuringUpdate$")
	cmd.Env = append(os.Environ(), "HOST_KILL_HELPER="+dir)
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "in update\n" {
		cmd.Process.Kill()
		t.Fatalf("child said %q, %v", line, err)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v, want SIGKILL", err)
	}

	e2 := newEnvIn(t, dir, demo("1.0.0"))
	if err := e2.db.Check(ctx); err != nil {
		t.Fatal(err)
	}
	after, err := e2.h.Show(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if after.Version != "1.0.0" || after.Hash != before.Hash || after.Previous != "" || after.Held != nil {
		t.Fatalf("after the kill: %+v", after)
	}
	var n int
	e2.db.SQL.QueryRow(`SELECT COUNT(*) FROM plugin_versions`).Scan(&n)
	if n != 1 {
		t.Fatalf("%d versions after the kill, want 1", n)
	}
	if v, err := e2.h.RunTool(ctx, ActorUser, "demo", "hello", nil); v != "你好,世界" {
		t.Fatalf("hello after the kill = %v, %v", v, err)
	}
	// The next update goes through.
	e2.site.set(demo("1.1.0", [3]string{"tools/hello.yaml", "'你好,'", "'您好,'"}))
	if o, err := e2.h.Update(ctx, "demo"); err != nil || o.Status != StatusApplied {
		t.Fatalf("update after the kill: %+v, %v", o, err)
	}
}

// killHelper is the child of TestKilledDuringUpdate: it starts an update
// and stops inside its transaction until it is killed.
func killHelper() {
	dir := os.Getenv("HOST_KILL_HELPER")
	t := &testing.T{}
	e := newEnvIn(t, dir, demo("1.1.0", [3]string{"tools/hello.yaml", "'你好,'", "'您好,'"}))
	testHookInUpdate = func() {
		os.Stdout.WriteString("in update\n")
		time.Sleep(time.Minute)
	}
	e.h.Update(context.Background(), "demo")
	os.Stdout.WriteString("update finished\n")
	os.Exit(3)
}

func newEnvIn(t *testing.T, dir string, files map[string]string) *env {
	e := newEnvDir(t, dir, files)
	return e
}
