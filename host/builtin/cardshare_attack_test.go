package builtin

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/cloud/client"
	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/campus/campustest"
)

// joinShare starts a share as the person and joins it with the link tool's link, returning
// the viewer once it has its first code.
func joinShare(t *testing.T, r *shareRig) *client.Viewer {
	t.Helper()
	ctx := context.Background()
	r.ok(t, "start", "")
	var ln CardShareLink
	if err := json.Unmarshal([]byte(r.ok(t, "link", "")), &ln); err != nil || !ln.Sharing {
		t.Fatalf("link: %+v %v", ln, err)
	}
	link, err := client.ParseSecretLink(ln.Link)
	if err != nil {
		t.Fatal(err)
	}
	v, err := client.Join(ctx, link, client.ViewerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Leave)
	if err := v.Send(ctx, map[string]string{"t": "hello"}); err != nil {
		t.Fatal(err)
	}
	nextCode(t, v, 10*time.Second)
	return v
}

// waitClosed waits for the viewer to see the channel end, failing if more than one code (one
// may have been on its way) arrives first.
func waitClosed(t *testing.T, v *client.Viewer, within time.Duration) string {
	t.Helper()
	deadline := time.After(within)
	codes := 0
	for {
		select {
		case ev, ok := <-v.Events():
			if !ok {
				return "ended"
			}
			switch ev.Type {
			case client.EventClosed:
				return ev.Reason
			case client.EventMessage:
				if codes++; strings.Contains(string(ev.Msg), `"code"`) && codes > 1 {
					t.Fatalf("a payment code after the share should have ended: %s", ev.Msg)
				}
			}
		case <-deadline:
			t.Fatalf("the share still runs %s later", within)
		}
	}
}

// TestCardShareRevokeEndsShare: withdrawing card-share's Cloud consent (the switch in Settings →
// Cloud, `harness cloud consent card-share off`) while a share runs ends it at once: the
// viewer's channel is closed, no further code is drawn from the card or sent, and status says
// nothing is shared. Turning Cloud off (or switching provider) does the same.
func TestCardShareRevokeEndsShare(t *testing.T) {
	for _, how := range []string{"revoke", "off"} {
		t.Run(how, func(t *testing.T) {
			r := newShareRig(t, 300*time.Millisecond, true)
			ctx := context.Background()
			v := joinShare(t, r)
			switch how {
			case "revoke":
				if err := r.m.Revoke(ctx, "card-share"); err != nil {
					t.Fatal(err)
				}
			case "off":
				if _, err := r.m.Use(ctx, "off"); err != nil {
					t.Fatal(err)
				}
			}
			var drawn int
			r.stand.Set(func(s *campustest.Stand) { drawn = len(s.PayCodes) })
			waitClosed(t, v, 5*time.Second)
			time.Sleep(time.Second) // three refresh intervals
			var after int
			r.stand.Set(func(s *campustest.Stand) { after = len(s.PayCodes) })
			if after > drawn+1 { // one draw may have been under way when consent went
				t.Errorf("%d codes drawn from the card after the consent was withdrawn", after-drawn)
			}
			if got := r.ok(t, "status", ""); !strings.Contains(got, `"sharing":false`) {
				t.Errorf("status after the consent was withdrawn: %s", got)
			}
			if got := r.ok(t, "link", ""); got != `{"sharing":false,"link":""}` {
				t.Errorf("link after the consent was withdrawn: %s", got)
			}
		})
	}
}

// TestCardShareExtendAsks: extending a share keeps a payment code in someone else's hands
// longer, so it is money like start: the assistant's extend waits for the person's answer and a
// scheduled task (which the assistant may have created) cannot extend at all, or a share would
// never end. The person's own tap extends, never past 30 minutes left, and minutes outside
// 1–30 are refused.
func TestCardShareExtendAsks(t *testing.T) {
	r := newShareRig(t, time.Minute, true)
	r.ok(t, "start", "")
	if res, err := r.call(t, host.ActorAgent, "extend", `{"minutes":30}`); outcome(res, err) != "confirm" {
		t.Errorf("the assistant's extend: %s %v", outcome(res, err), err)
	}
	if res, err := r.call(t, host.ActorScheduler, "extend", `{"minutes":30}`); outcome(res, err) != "refused" {
		t.Errorf("a scheduled extend: %s %v", outcome(res, err), err)
	}
	for _, in := range []string{`{"minutes":-5}`, `{"minutes":31}`, `{"minutes":1e9}`, `{"minutes":1.5}`, `{"minutes":"30"}`} {
		if res, err := r.call(t, host.ActorUser, "extend", in); err == nil {
			t.Errorf("extend %s: %s", in, outcome(res, err))
		}
	}
	var st CardShareStatus
	if err := json.Unmarshal([]byte(r.ok(t, "extend", `{"minutes":30}`)), &st); err != nil || st.ExpiresAt == nil {
		t.Fatalf("the person's extend: %v", err)
	}
	if left := time.Until(time.UnixMilli(*st.ExpiresAt)); left > CardShareExtendMax+time.Second {
		t.Errorf("%s left after extend", left)
	}
}

// TestCardShareHelloFlood: the viewer's page may say hello as often as it likes (a script in
// the friend's browser, a reconnect loop); while the card fails, a hello within 3 s of the last
// attempt gets "paused" again rather than another request to the card service (which would
// hammer the person's card account), as a hello after a good code gets that code again.
func TestCardShareHelloFlood(t *testing.T) {
	r := newShareRig(t, time.Hour, true)
	ctx := context.Background()
	old := helloThrottle
	helloThrottle = time.Second
	t.Cleanup(func() { helloThrottle = old })
	v := joinShare(t, r)
	r.stand.Expire("card")
	time.Sleep(helloThrottle + 100*time.Millisecond) // the first code is no longer recent
	before := r.stand.Count("card GET /berserker-app")
	for range 20 {
		if err := v.Send(ctx, map[string]string{"t": "hello"}); err != nil {
			t.Fatal(err)
		}
	}
	paused := 0
	for deadline := time.After(helloThrottle / 2); ; {
		select {
		case ev := <-v.Events():
			if ev.Type == client.EventMessage && strings.Contains(string(ev.Msg), `"paused"`) {
				paused++
			}
			continue
		case <-deadline:
		}
		break
	}
	if paused == 0 {
		t.Fatal("no paused frame for 20 hellos while the card fails")
	}
	if n := r.stand.Count("card GET /berserker-app") - before; n > 1 {
		t.Errorf("20 hellos within a second sent %d requests to the card service", n)
	}
}

// TestCardShareSurvivesDatabaseClosing: the consent check failing (the host's database closing
// as the host shuts down) is not a withdrawal: the share is not closed on the provider, so the
// next run of the host can resume it with the same link.
func TestCardShareSurvivesDatabaseClosing(t *testing.T) {
	r := newShareRig(t, time.Hour, true)
	v := joinShare(t, r)
	if err := r.h.Store().Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(3 * consentPoll)
	for {
		select {
		case ev, ok := <-v.Events():
			if !ok || ev.Type == client.EventClosed {
				t.Fatalf("the share was closed on the provider when the database closed (%s)", ev.Reason)
			}
			continue
		case <-deadline:
		}
		break
	}
}
