package abilities

import (
	"context"
	"testing"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/campus"
	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/plugin"
)

// The abilities and the campus client inside a real Host: the official
// grades plugin asks for the course token, then gets it from the stored
// authenticator on its own; a community plugin's schedule runs through
// Host.RunTool as the scheduler actor, under the permission rules.
func TestThroughHost(t *testing.T) {
	ctx := context.Background()
	th := &treeholeStandIn{needCourse: true}
	srv := httptestServer(t, th)
	db := openDB(t)
	clk := &clock{t: t0}
	th.now, th.smsCode, th.otpSecret = clk.now, "246810", otpSecret
	cl := &campus.Client{Sessions: campus.NewSQLSessions(db), Bases: map[string]string{"treehole": srv}}
	if _, err := campus.Login(ctx, cl.Sessions, "treehole", "", "jwt-1", clk.t); err != nil {
		t.Fatal(err)
	}
	set := New(db, WithCampus(cl), WithClock(clk.now))
	h, err := host.New(db, host.WithAbilities(set), host.WithCampus(cl), host.WithClock(clk.now))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.InstallOfficial(ctx); err != nil {
		t.Fatal(err)
	}
	asJSON := func(v any, err error) string {
		t.Helper()
		if err != nil {
			return "error: " + err.Error()
		}
		b, _ := expr.ToJSON(v, "")
		return string(b)
	}
	got := asJSON(h.RunTool(ctx, host.ActorUser, "grades", "summary", nil))
	if want := `{"status":"verification_required","kind":"course","methods":["sms","otp"],"message":"树洞需要验证后才能查看课程数据：填入手机令牌（IAAA 身份验证器）的 6 位验证码，或先发送短信验证码再填入。","next":"grades__sendCode"}`; got != want {
		t.Errorf("grades without authenticator:\n got %s\nwant %s", got, want)
	}
	if err := SetOTPSecret(ctx, db, otpSecret, clk.t); err != nil {
		t.Fatal(err)
	}
	got = asJSON(h.RunTool(ctx, host.ActorUser, "grades", "summary", nil))
	if want := `{"gpa":3.812,"computedGpa":null,"credits":0,"terms":[]}`; got != want {
		t.Errorf("grades with authenticator:\n got %s\nwant %s", got, want)
	}
	// Treehole never saw the session's token in a plugin-visible place,
	// and saw the authenticator's code.
	code, _ := Code(otpSecret, clk.t)
	log := th.takeLog()
	if len(log) != 4 || log[2] != `POST /chapi/api/course/password_get_token {"code":"`+code+`"}` {
		t.Errorf("Treehole saw %q", log)
	}

	rv, err := h.Review(ctx, "testdata/reminders")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Install(ctx, "testdata/reminders", rv.Hash); err != nil {
		t.Fatal(err)
	}
	got = asJSON(h.RunTool(ctx, host.ActorUser, "reminders", "remind", obj("text", "背单词", "daily", "18:00")))
	if want := `{"id":1,"nextRun":1898848800000}`; got != want {
		t.Errorf("remind: %s, want %s", got, want)
	}
	// A community plugin's write tools start at ask: the scheduler has
	// nobody to ask, so the run is refused and kept as such.
	clk.t = t0.Add(31 * time.Minute)
	runs, err := set.Scheduler().RunDue(ctx)
	if err != nil || len(runs) != 1 || runs[0].OK || runs[0].Error == "" {
		t.Fatalf("run at ask: %+v, %v", runs, err)
	}
	if want := "host: scheduler may not run reminders.note: write tools of this plugin are set to ask, and a scheduled run cannot ask"; runs[0].Error != want {
		t.Errorf("refused run: %q, want %q", runs[0].Error, want)
	}
	if err := h.SetMode(ctx, "reminders", plugin.EffectWrite, host.ModeAuto); err != nil {
		t.Fatal(err)
	}
	clk.t = t0.Add(24*time.Hour + 31*time.Minute)
	runs, err = set.Scheduler().RunDue(ctx)
	if err != nil || len(runs) != 1 || !runs[0].OK {
		t.Fatalf("run at auto: %+v, %v", runs, err)
	}
	if got := asJSON(runs[0].Result, nil); got != `{"added":1}` {
		t.Errorf("scheduled result %s", got)
	}
	items, _, err := Todos(ctx, db, nil, 10)
	if err != nil || len(items) != 1 || items[0].Title != "背单词" || items[0].Plugin != "reminders" {
		t.Fatalf("todos after the run: %+v, %v", items, err)
	}
}
