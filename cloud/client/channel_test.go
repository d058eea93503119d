package client_test

import (
	"context"

	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/cloud/client"
	"github.com/pkuinfo/harness/cloud/protocol"
)

// openPair opens a channel for plugin "demo" and joins one viewer through the link's URL,
// returning once the owner has seen the join.
func openPair(t testing.TB, ts *testServer, opts client.OpenOptions) (*client.Channel, *client.Viewer) {
	t.Helper()
	ctx := context.Background()
	p, err := ts.newClient(t, nil).Plugin("demo", "channels")
	if err != nil {
		t.Fatal(err)
	}
	ch, err := p.OpenChannel(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ch.Disconnect)
	next(t, ch.Events(), client.EventConnected)
	// The viewer gets the link as a person would: as text.
	link, err := client.ParseSecretLink(ch.Link().Reveal())
	if err != nil {
		t.Fatal(err)
	}
	v, err := client.Join(ctx, link, client.ViewerOptions{Backoff: fastBackoff})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Leave)
	if ev := next(t, ch.Events(), client.EventJoin); ev.PeerID != v.PeerID() {
		t.Fatalf("join from %s, want %s", ev.PeerID, v.PeerID())
	}
	next(t, v.Events(), client.EventConnected)
	return ch, v
}

func TestChannelExchange(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	ch, v := openPair(t, ts, client.OpenOptions{TTL: 10 * time.Minute, Page: "view", Meta: map[string]any{"nameHint": "王_明", "pinRequired": true}})
	if string(v.Meta()) != `{"nameHint":"王_明","pinRequired":true}` {
		t.Errorf("viewer meta = %s", v.Meta())
	}
	if !v.OwnerOnline() {
		t.Errorf("viewer thinks the owner is offline")
	}
	if err := ch.Send(ctx, v.PeerID(), map[string]any{"t": "code", "code": "1234567890"}); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, v.Events(), client.EventMessage); string(ev.Msg) != `{"code":"1234567890","t":"code"}` {
		t.Errorf("viewer got %s", ev.Msg)
	}
	if err := v.Send(ctx, map[string]string{"t": "ack"}); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, ch.Events(), client.EventMessage); string(ev.Msg) != `{"t":"ack"}` || ev.PeerID != v.PeerID() {
		t.Errorf("owner got %s from %s", ev.Msg, ev.PeerID)
	}
	if err := ch.Send(ctx, client.Broadcast, []int{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, v.Events(), client.EventMessage); string(ev.Msg) != `[1,2,3]` {
		t.Errorf("viewer got broadcast %s", ev.Msg)
	}
	if err := ch.Send(ctx, "nobody", 1); err == nil || err.Error() != "cloud channel: send: peer nobody is not online" {
		t.Errorf("Send to an unknown peer: err = %v", err)
	}
	big := strings.Repeat("x", 4096)
	if err := ch.Send(ctx, v.PeerID(), big); err == nil || err.Error() != "cloud channel: send: the frame is 4114 bytes sealed; the limit is 4096" {
		t.Errorf("Send of a 4 KB string: err = %v", err)
	}
	if err := v.Send(ctx, big); err == nil {
		t.Errorf("viewer Send of a 4 KB string succeeded")
	}

	// Extend: the viewer hears of the new expiry.
	exp, err := ch.Extend(ctx, 20*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if ev := next(t, v.Events(), client.EventExtended); !ev.ExpiresAt.Equal(exp) {
		t.Errorf("viewer heard expiry %v, owner set %v", ev.ExpiresAt, exp)
	}

	// Mailbox: sealed with encKey, readable by the viewer.
	if err := ch.Mailbox().Put(ctx, "last", map[string]string{"code": "0000"}, time.Minute); err != nil {
		t.Fatal(err)
	}
	box, err := v.Mailbox(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(box) != 1 || box[0].Slot != "last" || string(box[0].Msg) != `{"code":"0000"}` {
		t.Errorf("mailbox = %+v", box)
	}
	if err := ch.Mailbox().Clear(ctx); err != nil {
		t.Fatal(err)
	}
	if box, err := v.Mailbox(ctx); err != nil || len(box) != 0 {
		t.Errorf("mailbox after Clear = %v, %v", box, err)
	}

	// Close: the viewer gets `closed` (owner) and stops.
	if err := ch.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, v.Events(), client.EventClosed); ev.Reason != "owner" {
		t.Errorf("closed reason %q, want owner", ev.Reason)
	}
	<-v.Done()
	if !errors.Is(v.Err(), client.ErrChannelClosed) {
		t.Errorf("viewer Err = %v, want ErrChannelClosed", v.Err())
	}
	if _, err := client.Join(ctx, ch.Link(), client.ViewerOptions{}); !errors.Is(err, client.ErrChannelClosed) && !client.IsCode(err, protocol.CodeGone) {
		t.Errorf("Join after close: err = %v", err)
	}
}

func TestChannelKickAndFull(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	ch, v := openPair(t, ts, client.OpenOptions{})
	// maxPeers defaults to 1: a forwarded link is useless while the seat is taken.
	if _, err := client.Join(ctx, ch.Link(), client.ViewerOptions{}); !client.IsCode(err, protocol.CodeConflict) {
		t.Fatalf("second Join: err = %v, want conflict", err)
	}
	if err := ch.Kick(ctx, v.PeerID()); err != nil {
		t.Fatal(err)
	}
	<-v.Done()
	if !errors.Is(v.Err(), client.ErrKicked) {
		t.Errorf("kicked viewer Err = %v, want ErrKicked", v.Err())
	}
	// The seat is free again.
	v2, err := client.Join(ctx, ch.Link(), client.ViewerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer v2.Leave()
	next(t, ch.Events(), client.EventJoin)
}

func TestWrongSecretCannotJoin(t *testing.T) {
	ts := newTestServer(t)
	ch, _ := openPair(t, ts, client.OpenOptions{MaxPeers: 2})
	// Same channel, another secret: the meta does not open, so Join stops before claiming a seat.
	bad, err := client.ParseSecretLink(ts.URL + "/s/" + ch.ID() + "#k=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8")
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.Join(context.Background(), bad, client.ViewerOptions{})
	if err == nil || !errors.Is(err, protocol.ErrOpen) {
		t.Errorf("Join with a wrong secret: err = %v", err)
	}
}

func TestReconnectAfterServerDrop(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	ch, v := openPair(t, ts, client.OpenOptions{})
	if n := ts.ln.dropAll(); n < 2 {
		t.Fatalf("dropped %d connections, want at least the two sockets", n)
	}
	ev := next(t, ch.Events(), client.EventDisconnected)
	if ev.Err == nil {
		t.Errorf("disconnected without a reason")
	}
	next(t, ch.Events(), client.EventConnected)
	next(t, v.Events(), client.EventDisconnected)
	next(t, v.Events(), client.EventConnected)
	// The owner relearned the peer from hello; frames flow both ways again.
	deadline := time.Now().Add(10 * time.Second)
	for {
		sctx, cancel := context.WithTimeout(ctx, time.Second)
		err := ch.Send(sctx, v.PeerID(), "after")
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Send after reconnect: %v", err)
		}
		time.Sleep(20 * time.Millisecond) // the viewer's seat may still be reported offline
	}
	if ev := next(t, v.Events(), client.EventMessage); string(ev.Msg) != `"after"` {
		t.Errorf("viewer got %s", ev.Msg)
	}
	if err := v.Send(ctx, "back"); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, ch.Events(), client.EventMessage); string(ev.Msg) != `"back"` {
		t.Errorf("owner got %s", ev.Msg)
	}
	if ch.Err() != nil || v.Err() != nil {
		t.Errorf("Err after reconnect: %v, %v", ch.Err(), v.Err())
	}
}

func TestChannelExpiry(t *testing.T) {
	ts := newTestServer(t)
	ch, v := openPair(t, ts, client.OpenOptions{TTL: time.Minute})
	ts.clock.Advance(2 * time.Minute)
	ev := next(t, v.Events(), client.EventClosed)
	if ev.Reason != "expired" {
		t.Errorf("viewer closed reason %q, want expired", ev.Reason)
	}
	if ev := next(t, ch.Events(), client.EventClosed); ev.Reason != "expired" {
		t.Errorf("owner closed reason %q, want expired", ev.Reason)
	}
	<-ch.Done()
	if !errors.Is(ch.Err(), client.ErrChannelClosed) {
		t.Errorf("owner Err = %v", ch.Err())
	}
	// Events is closed after the end.
	for range ch.Events() {
	}
}

func TestResumeChannelAfterRestart(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	ids := &client.MemIdentityStore{} // the device's keystore, kept across the restart
	p1, err := ts.newClient(t, ids).Plugin("demo", "channels")
	if err != nil {
		t.Fatal(err)
	}
	ch, err := p1.OpenChannel(ctx, client.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	next(t, ch.Events(), client.EventConnected)
	v, err := client.Join(ctx, ch.Link(), client.ViewerOptions{Backoff: fastBackoff})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Leave()
	next(t, ch.Events(), client.EventJoin)
	next(t, v.Events(), client.EventConnected)

	saved, err := ch.State().MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if s := fmt.Sprintf("%v %+v %#v %s", ch.State(), ch.State(), ch.State(), ch.State()); s != "[channel state] [channel state] [channel state] [channel state]" {
		t.Errorf("state printed as %q", s)
	}
	link := ch.Link().Reveal()
	// The app stops: the owner goes offline, the viewer hears it.
	ch.Disconnect()
	if ev := next(t, v.Events(), client.EventOwner); ev.Online {
		t.Errorf("owner presence after Disconnect: online")
	}
	// The app starts again: a new Client over the same keystore, the saved channel state.
	var st client.ChannelState
	if err := st.UnmarshalBinary(saved); err != nil {
		t.Fatal(err)
	}
	p2, err := ts.newClient(t, ids).Plugin("demo", "channels")
	if err != nil {
		t.Fatal(err)
	}
	resumed, err := p2.ResumeChannel(ctx, st, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer resumed.Disconnect()
	if resumed.Link().Reveal() != link {
		t.Errorf("resumed link differs")
	}
	next(t, resumed.Events(), client.EventConnected)
	if ev := next(t, v.Events(), client.EventOwner); !ev.Online {
		t.Errorf("owner presence after resume: offline")
	}
	if err := resumed.Send(ctx, v.PeerID(), "resumed"); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, v.Events(), client.EventMessage); string(ev.Msg) != `"resumed"` {
		t.Errorf("viewer got %s", ev.Msg)
	}
	if ts.count("POST /v1/devices") != 1 {
		t.Errorf("%d registrations, want 1", ts.count("POST /v1/devices"))
	}
}

func TestResumeClosedChannel(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	p, err := ts.newClient(t, nil).Plugin("demo", "channels")
	if err != nil {
		t.Fatal(err)
	}
	ch, err := p.OpenChannel(ctx, client.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st := ch.State()
	if err := ch.Close(ctx); err != nil {
		t.Fatal(err)
	}
	resumed, err := p.ResumeChannel(ctx, st, 0)
	if err != nil {
		t.Fatal(err)
	}
	<-resumed.Done()
	if !client.IsCode(resumed.Err(), protocol.CodeGone) {
		t.Errorf("resuming a closed channel: Err = %v, want gone", resumed.Err())
	}
	ev, ok := <-resumed.Events()
	if !ok || ev.Type != client.EventClosed || ev.Err == nil {
		t.Errorf("resuming a closed channel: event %+v, %v", ev, ok)
	}
}

func TestFrameBytesIsTheDefaultLimit(t *testing.T) {
	if got := protocol.DefaultLimits().Channels.FrameBytes; got != client.FrameBytes {
		t.Errorf("DEFAULT_LIMITS frameBytes %d, client.FrameBytes %d", got, client.FrameBytes)
	}
}

// CloseChannel ends a channel by id alone (its keys forgotten, no owner socket): the viewer
// sees it close with reason owner; closing it again is not an error; another plugin of the
// same device may not close it.
func TestCloseChannelByID(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	c := ts.newClient(t, nil)
	p, err := c.Plugin("demo", "channels")
	if err != nil {
		t.Fatal(err)
	}
	ch, err := p.OpenChannel(ctx, client.OpenOptions{TTL: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	next(t, ch.Events(), client.EventConnected)
	v, err := client.Join(ctx, ch.Link(), client.ViewerOptions{Backoff: fastBackoff})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Leave)
	next(t, v.Events(), client.EventConnected)
	id := ch.ID()
	ch.Disconnect()
	other, err := c.Plugin("other", "channels")
	if err != nil {
		t.Fatal(err)
	}
	if err := other.CloseChannel(ctx, id); !client.IsCode(err, protocol.CodeForbidden) {
		t.Errorf("another plugin closing the channel: %v", err)
	}
	if err := p.CloseChannel(ctx, "not an id"); err == nil {
		t.Error("closed a channel by a malformed id")
	}
	if err := p.CloseChannel(ctx, id); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, v.Events(), client.EventClosed); ev.Reason != protocol.ReasonOwner {
		t.Errorf("the viewer saw the channel end with %q", ev.Reason)
	}
	if err := p.CloseChannel(ctx, id); err != nil {
		t.Errorf("closing it again: %v", err)
	}
}
