package builtin

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/pkuinfo/harness/cloud/client"
	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/campus"
	"github.com/pkuinfo/harness/host/cloud"
	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/plugin"
)

// The card-share plugin (seed 003 “PKU harness Cloud”, “# 插件指南”): the campus card payment
// code shared live with one friend through an end-to-end encrypted relay channel. The friend
// opens the share link in any browser; the viewer page (/w/card-share/view on the provider,
// cloud/viewer) decrypts each frame with the key in the link's #k= fragment, which the server
// never sees. The link leaves the host only through the screen's QR code (the userOnly link
// tool): never in a result the assistant reads, the audit log or a log line (client.SecretLink
// prints "[secret link]"). The channel comes from the plugin's consent-gated Cloud handle
// (Context.Cloud): nothing is shared before the person allows card-share to use the provider.

//go:embed ui/card-share/status.json
var cardShareWidget []byte

//go:embed ui/card-share/main.json
var cardShareScreen []byte

// Card-share limits (seed 003 “# 插件指南” §5: ttlS 30 * 60, maxPeers 1, extend 15 * 60).
const (
	// CardShareTTL is how long a share lasts when it starts.
	CardShareTTL = 30 * time.Minute
	// CardShareExtendMax is the most one extend adds, and the most a share may have left after
	// it: a payment code is money, so a share never runs open-ended.
	CardShareExtendMax = 30 * time.Minute
)

// helloThrottle is how soon after a code a viewer's hello gets that code again rather than a
// new one from the card (and after a failed attempt, "paused" again rather than another
// request to the card); tests shorten it.
var helloThrottle = 3 * time.Second

// consentPoll is how often a running share checks that card-share may still use Cloud with
// the provider it was opened on: withdrawing the consent, turning Cloud off or switching
// provider ends the share within this time (and no code is drawn or sent after it).
const consentPoll = 500 * time.Millisecond

// CardShareRefresh is how often a fresh payment code is sent while the viewer is online (the
// card app's codes are short-lived; the relay allows 60 frames a minute). A share reads it when
// it starts; tests shorten it.
var CardShareRefresh = 30 * time.Second

// cardShare is the one live share of a host.
type cardShare struct {
	h       *host.Host
	campus  interp.CampusClient
	payer   campus.CardPayer
	cp      *cloud.Plugin
	ch      *client.Channel
	refresh time.Duration
	stop    context.CancelFunc
	done    chan struct{}

	mu          sync.Mutex
	expires     time.Time
	peer        string
	online      bool
	sent        int
	refreshedAt time.Time
	triedAt     time.Time // when a code was last asked of the card
	lastErr     string
	last        *cardCodeFrame // the last code sent, dropped when a code fails or the share ends
	ended       string         // why the share ended; "" while it runs
}

var cardShares sync.Map // *host.Host → *cardShare

// activeShare is h's running share, or nil.
func activeShare(h *host.Host) *cardShare {
	v, ok := cardShares.Load(h)
	if !ok {
		return nil
	}
	s := v.(*cardShare)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended != "" {
		return nil
	}
	return s
}

// CardShareStatus is the result of every card-share tool but link: whether a share runs,
// until when (Unix ms), the viewer's state ("none" until someone opens the link, then
// "online" or "offline"), how many codes were sent and when the last one was (Unix ms), and
// the last problem refreshing the code. It never holds the link or a payment code.
type CardShareStatus struct {
	Sharing     bool   `json:"sharing"`
	ExpiresAt   *int64 `json:"expiresAt"`
	Viewer      string `json:"viewer"`
	CodesSent   int    `json:"codesSent"`
	RefreshedAt *int64 `json:"refreshedAt"`
	Problem     string `json:"problem,omitempty"`
	// Screen is where the person finds the QR code of the link.
	Screen string `json:"screen"`
}

func (s *cardShare) status() CardShareStatus {
	out := CardShareStatus{Viewer: "none", Screen: "/p/card-share/main"}
	if s == nil {
		return out
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended != "" {
		return out
	}
	exp := s.expires.UnixMilli()
	out.Sharing, out.ExpiresAt, out.CodesSent, out.Problem = true, &exp, s.sent, s.lastErr
	if s.peer != "" {
		out.Viewer = map[bool]string{true: "online", false: "offline"}[s.online]
	}
	if !s.refreshedAt.IsZero() {
		r := s.refreshedAt.UnixMilli()
		out.RefreshedAt = &r
	}
	return out
}

var cardShareMu sync.Mutex // serialises start and stop per process

func cardShareStart(c *Context, _ Empty) (CardShareStatus, error) {
	cardShareMu.Lock()
	defer cardShareMu.Unlock()
	if s := activeShare(c.Host); s != nil {
		return s.status(), nil
	}
	// Cloud first: without a provider or the person's consent no card call is made.
	cp, err := c.Cloud()
	if err != nil {
		return CardShareStatus{}, Errorf("%v", err)
	}
	const where = "(Settings → Cloud, or harness cloud use URL and harness cloud consent card-share on)"
	// requestConsent(): without the person's consent the call fails consent_required with the
	// request the faces turn into the host's consent panel (the web app shows it over this
	// screen and starts again once allowed; the CLI names `harness cloud consent card-share on`).
	if err := cp.RequestConsent(c); err != nil {
		return CardShareStatus{}, err
	}
	if st := cp.Status(c); !st.Available {
		return CardShareStatus{}, Errorf("Cloud is not available to card-share: %s %s", st.Reason, where)
	}
	cc := c.Campus()
	if cc == nil {
		return CardShareStatus{}, interp.Wrap(host.KindTool, "the host has no campus client: sign in to the campus card (harness campus login card)", &campus.NotSignedInError{Service: "card"})
	}
	payer, err := campus.CardPayerOf(c, cc)
	if err != nil {
		return CardShareStatus{}, campusErr(err)
	}
	// The first code before the channel opens: a card that cannot pay never gets a link.
	if _, err := campus.CardPaymentCode(c, cc, payer); err != nil {
		return CardShareStatus{}, campusErr(err)
	}
	// A share still open from before the host restarted goes on, with the same link (its keys
	// were kept sealed by the Cloud handle), rather than leaving its viewer waiting.
	if ch := resumeSaved(c, cp); ch != nil {
		return startShare(c.Host, cc, payer, cp, ch, CardShareRefresh).status(), nil
	}
	ch, err := cp.OpenChannel(c, client.OpenOptions{TTL: CardShareTTL, MaxPeers: 1, Page: "view",
		Meta: cardShareMeta{V: 1, Title: "校园卡付款码", NameHint: nameHint(payer.Holder), RefreshS: int(CardShareRefresh / time.Second)}})
	if err != nil {
		return CardShareStatus{}, Errorf("%v", err)
	}
	s := startShare(c.Host, cc, payer, cp, ch, CardShareRefresh)
	return s.status(), nil
}

// campusErr is a campus card error as Start returns it: "campus card: …" for the CLI, with a
// *campus.NotSignedInError kept reachable (errors.As) so that the web app can point the person
// to Settings → Campus sign-in instead of the command the message names.
func campusErr(err error) error {
	return interp.Wrap(host.KindTool, "campus card: "+err.Error(), err)
}

// resumeSaved reconnects the newest of the plugin's saved channels that has not expired, or
// returns nil; saved channels it cannot resume are forgotten.
func resumeSaved(c *Context, cp *cloud.Plugin) *client.Channel {
	ids, err := cp.Channels(c)
	if err != nil || len(ids) == 0 {
		return nil
	}
	var out *client.Channel
	for _, id := range ids {
		ch, err := cp.ResumeChannel(c, id, 0)
		if err != nil {
			cp.ForgetChannel(c, id)
			continue
		}
		if out == nil || ch.ExpiresAt().After(out.ExpiresAt()) {
			if out != nil {
				out.Disconnect()
			}
			out = ch
		} else {
			ch.Disconnect()
		}
	}
	return out
}

// startShare runs the share loop of ch on h.
func startShare(h *host.Host, cc interp.CampusClient, payer campus.CardPayer, cp *cloud.Plugin, ch *client.Channel, refresh time.Duration) *cardShare {
	ctx, cancel := context.WithCancel(context.Background())
	s := &cardShare{h: h, campus: cc, payer: payer, cp: cp, ch: ch, refresh: refresh, stop: cancel, done: make(chan struct{}), expires: ch.ExpiresAt()}
	cardShares.Store(h, s)
	go s.run(ctx)
	return s
}

// cardShareMeta is the channel's sealed meta, which the viewer reads before joining.
type cardShareMeta struct {
	V        int    `json:"v"`
	Title    string `json:"title"`
	NameHint string `json:"nameHint"`
	RefreshS int    `json:"refreshS"`
}

// cardCodeFrame is the frame carrying a payment code (seed 003: frames are validated by the
// viewer; v is this frame format's version).
type cardCodeFrame struct {
	T        string `json:"t"` // "code"
	V        int    `json:"v"`
	Code     string `json:"code"`
	Seq      int    `json:"seq"`
	At       int64  `json:"at"` // Unix ms the code was drawn
	RefreshS int    `json:"refreshS"`
}

// cardPausedFrame tells the viewer the code cannot be refreshed now (the card session ended,
// the card service is down): the page hides the last code, which may no longer pay.
type cardPausedFrame struct {
	T string `json:"t"` // "paused"
	V int    `json:"v"`
}

// nameHint masks a name as the seed's example does ("王_明"): the first and last characters.
func nameHint(name string) string {
	r := []rune(name)
	switch {
	case len(r) == 0:
		return ""
	case len(r) == 1:
		return string(r) + "_"
	case len(r) == 2:
		return string(r[:1]) + "_"
	}
	return string(r[:1]) + "_" + string(r[len(r)-1:])
}

// run relays fresh codes until the channel ends or the share is stopped: a code when the
// viewer says hello (its socket is up: first open and every reconnect) and every refresh
// interval while the viewer is online.
func (s *cardShare) run(ctx context.Context) {
	defer close(s.done)
	tick := time.NewTicker(s.refresh)
	defer tick.Stop()
	poll := time.NewTicker(consentPoll)
	defer poll.Stop()
	events := s.ch.Events()
	for {
		select {
		case <-ctx.Done():
			s.end("stopped")
			return
		case <-poll.C:
			if ok, err := s.consented(ctx); err == nil && !ok {
				s.revoked()
				return
			}
		case ev, ok := <-events:
			if !ok {
				s.end("closed")
				return
			}
			switch ev.Type {
			case client.EventConnected:
				// The owner socket is up (first connect or reconnect): the server's hello lists
				// the seat, which a join before the socket was up never announced as a join.
				s.adoptPeer()
				s.mu.Lock()
				live := s.peer != "" && s.online
				s.mu.Unlock()
				if live {
					s.sendCode(ctx)
				}
			case client.EventJoin:
				// A seat is claimed; the viewer is online once its socket is (peer event or its
				// hello): a code sent before would be dropped.
				s.mu.Lock()
				s.peer, s.online = ev.PeerID, false
				s.mu.Unlock()
			case client.EventPeer:
				s.mu.Lock()
				if ev.PeerID == s.peer {
					s.online = ev.Online
				}
				s.mu.Unlock()
			case client.EventLeave:
				s.mu.Lock()
				if ev.PeerID == s.peer {
					s.peer, s.online = "", false
				}
				s.mu.Unlock()
			case client.EventMessage:
				s.adoptPeer()
				if s.isPeer(ev.PeerID) && viewerHello(ev.Msg) {
					s.mu.Lock()
					s.online = true
					now := s.h.Now()
					last, recent := s.last, now.Sub(s.refreshedAt) < helloThrottle
					failed := last == nil && !s.triedAt.IsZero() && now.Sub(s.triedAt) < helloThrottle
					s.mu.Unlock()
					// A viewer sending hello after hello gets the last code again, not a new
					// request to the card each time.
					if recent && last != nil && s.allowed(ctx) {
						if err := s.ch.Send(ctx, ev.PeerID, *last); err != nil {
							slog.Debug("card-share: resend the code", "err", err)
						}
						continue
					}
					// While the card fails, hello after hello is told "paused" again, not
					// another request to the card service.
					if failed && s.allowed(ctx) {
						if err := s.ch.Send(ctx, ev.PeerID, cardPausedFrame{T: "paused", V: 1}); err != nil {
							slog.Debug("card-share: paused frame", "err", err)
						}
						continue
					}
					s.sendCode(ctx)
				}
			case client.EventClosed:
				s.end(ev.Reason)
				return
			}
		case <-tick.C:
			s.mu.Lock()
			live := s.peer != "" && s.online
			s.mu.Unlock()
			if live {
				s.sendCode(ctx)
			}
		}
	}
}

// consented reports whether card-share still has the person's Cloud consent for the provider
// the share was opened on, and it is the consent the channel was opened under (a consent
// withdrawn and given again, in this process or another, does not carry the old link on); err
// is a failed check (the database closing with the host), which is not a withdrawal: the share
// is left for a resume.
func (s *cardShare) consented(ctx context.Context) (bool, error) {
	return s.cp.ChannelAllowed(ctx, s.ch)
}

// allowed reports whether a code may be drawn and sent now: only with the consent checked (a
// failed check counts as no: a payment code is money).
func (s *cardShare) allowed(ctx context.Context) bool {
	ok, err := s.consented(ctx)
	return err == nil && ok
}

// revoked ends the share because its consent is gone: the channel is closed on the provider it
// was opened on (the viewer's page ends and the link is dead), which is the person's own
// stopping of what they shared, then forgotten here.
func (s *cardShare) revoked() {
	cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.ch.Close(cctx); err != nil {
		slog.Debug("card-share: close the share after the consent was withdrawn", "err", err)
	}
	s.end("revoked")
}

// adoptPeer takes the channel's one seat as the viewer when none is known yet.
func (s *cardShare) adoptPeer() {
	peers := s.ch.Peers()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(peers) == 0 {
		return
	}
	if s.peer == "" || s.peer == peers[0].PeerID {
		s.peer, s.online = peers[0].PeerID, peers[0].Online
	}
}

func (s *cardShare) isPeer(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return id != "" && id == s.peer
}

// viewerHello accepts exactly {"t":"hello"}: frames from the peer are validated before use.
func viewerHello(msg json.RawMessage) bool {
	var f map[string]json.RawMessage
	if len(msg) > 256 || json.Unmarshal(msg, &f) != nil || len(f) != 1 {
		return false
	}
	return string(f["t"]) == `"hello"`
}

// sendCode draws a fresh payment code and sends it to the viewer; a failure is kept as the
// share's problem and the viewer is told the code is paused.
func (s *cardShare) sendCode(ctx context.Context) {
	s.mu.Lock()
	peer := s.peer
	s.mu.Unlock()
	if peer == "" {
		return
	}
	// No card request and no code without the consent (the poll then ends the share).
	if !s.allowed(ctx) {
		return
	}
	s.mu.Lock()
	s.triedAt = s.h.Now()
	s.mu.Unlock()
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	code, err := campus.CardPaymentCode(cctx, s.campus, s.payer)
	if err != nil {
		var nse *campus.NotSignedInError
		problem := "the card service did not give a code: " + err.Error()
		if errors.As(err, &nse) {
			problem = nse.Error()
		}
		s.mu.Lock()
		s.lastErr, s.last = problem, nil
		s.mu.Unlock()
		if err := s.ch.Send(cctx, peer, cardPausedFrame{T: "paused", V: 1}); err != nil {
			slog.Debug("card-share: paused frame", "err", err)
		}
		return
	}
	now := s.h.Now()
	s.mu.Lock()
	seq := s.sent + 1
	s.mu.Unlock()
	frame := cardCodeFrame{T: "code", V: 1, Code: code, Seq: seq, At: now.UnixMilli(), RefreshS: int(s.refresh / time.Second)}
	if err := s.ch.Send(cctx, peer, frame); err != nil {
		s.mu.Lock()
		s.lastErr = "the relay did not take the code: " + err.Error()
		s.mu.Unlock()
		return
	}
	s.mu.Lock()
	s.sent, s.refreshedAt, s.lastErr, s.last = seq, now, "", &frame
	s.mu.Unlock()
}

// end marks the share over (why: owner, expired, stopped, …) and drops the socket.
func (s *cardShare) end(why string) {
	s.mu.Lock()
	s.last = nil
	if s.ended == "" {
		s.ended = why
		if why == "" {
			s.ended = "closed"
		}
	}
	s.mu.Unlock()
	s.ch.Disconnect()
	// The share is over: its keys need not be kept for a resume.
	if err := s.cp.ForgetChannel(context.Background(), s.ch.ID()); err != nil {
		slog.Debug("card-share: forget the channel", "err", err)
	}
	cardShares.CompareAndDelete(s.h, s)
}

// CardShareExtendInput is card-share.extend's input.
type CardShareExtendInput struct {
	Minutes int `json:"minutes,omitempty" jsonschema:"minutes to add to the share, 1–30; default 15" harness:"min=1,max=30,default=15"`
}

func cardShareExtend(c *Context, in CardShareExtendInput) (CardShareStatus, error) {
	s := activeShare(c.Host)
	if s == nil {
		return CardShareStatus{}, Errorf("no payment code is being shared: start a share first")
	}
	if in.Minutes == 0 {
		in.Minutes = 15
	}
	s.mu.Lock()
	left := time.Until(s.expires)
	s.mu.Unlock()
	ttl := max(left, 0) + time.Duration(in.Minutes)*time.Minute
	if ttl > CardShareExtendMax {
		ttl = CardShareExtendMax
	}
	exp, err := s.ch.Extend(c, ttl)
	if err != nil {
		return CardShareStatus{}, Errorf("Cloud: %v", err)
	}
	if err := s.cp.SaveChannel(c, s.ch); err != nil {
		slog.Debug("card-share: save the extended channel", "err", err)
	}
	s.mu.Lock()
	s.expires = exp
	s.mu.Unlock()
	return s.status(), nil
}

func cardShareStop(c *Context, _ Empty) (CardShareStatus, error) {
	cardShareMu.Lock()
	defer cardShareMu.Unlock()
	s := activeShare(c.Host)
	if s == nil {
		// Shares from before the host restarted are closed too: stop means nobody sees a code.
		if cp, err := c.Cloud(); err == nil {
			ids, _ := cp.Channels(c)
			for _, id := range ids {
				ch, err := cp.ResumeChannel(c, id, 0)
				if err == nil {
					err = cp.CloseChannel(c, ch)
				}
				if err != nil {
					cp.ForgetChannel(c, id)
					return CardShareStatus{}, Errorf("Cloud: a share from before the restart did not close: %v (it ends by itself when it expires)", err)
				}
			}
		}
		return (*cardShare)(nil).status(), nil
	}
	err := s.cp.CloseChannel(c, s.ch)
	s.stop()
	<-s.done
	if err != nil {
		return CardShareStatus{}, Errorf("Cloud: the share is stopped here, but the server did not confirm it: %v (it ends by itself when it expires)", err)
	}
	return (*cardShare)(nil).status(), nil
}

func cardShareStatus(c *Context, _ Empty) (CardShareStatus, error) {
	return activeShare(c.Host).status(), nil
}

// CardShareLink is card-share.link's result, for the screen's QR code only: the share link
// while sharing. The tool is userOnly, so the assistant can neither call it nor see it.
type CardShareLink struct {
	Sharing bool   `json:"sharing"`
	Link    string `json:"link"`
}

func cardShareLink(c *Context, _ Empty) (CardShareLink, error) {
	s := activeShare(c.Host)
	if s == nil {
		return CardShareLink{}, nil
	}
	return CardShareLink{Sharing: true, Link: s.ch.Link().Reveal()}, nil
}

// cardShareInstructions tell the assistant what it may do; it never sees the link.
const cardShareInstructions = `付款码共享:card-share__start 开始把校园卡付款码实时分享给一位朋友(端到端加密,30 分钟,只有第一个打开链接的人能看),card-share__extend 延长,card-share__stop 结束,card-share__status 查看状态。分享链接只在「付款码共享」页面里以二维码显示,你看不到它;开始后请用户打开该页面让朋友扫码。`

// CardShare shares the campus card payment code live with one friend (seed 003 “# 插件指南”).
var CardShare = &Plugin{
	Private:     true,
	ID:          "card-share",
	Name:        "付款码共享",
	Description: "把校园卡付款码实时分享给朋友,端到端加密。",
	Version:     "0.1.0",
	Icon:        "qr",
	Campus:      []string{"card"},
	Cloud: &plugin.Cloud{
		Protocol: 1, Uses: []string{"channels"}, E2E: true, Pages: []string{"view"},
		DisclosureZh: []string{"分享期间,加密后的付款码经云服务转发给你分享的人;服务器无法解密", "服务器能看到:分享的开始/结束时间、查看者的 IP"},
		DisclosureEn: []string{"While sharing, encrypted payment codes are relayed to the person you shared with; the server can’t decrypt them", "The server sees when a share starts and ends, and the viewer’s IP address"},
	},
	DefaultModes: map[plugin.Effect]host.Mode{plugin.EffectRead: host.ModeAuto, plugin.EffectWrite: host.ModeAuto, plugin.EffectMoney: host.ModeAsk},
	I18n: I18n{
		En: EnText{
			Name:        "Payment code sharing",
			Description: "Share your campus card payment code with a friend live, end-to-end encrypted.",
			Tools: map[string]ToolText{
				"start": {Title: "Share the payment code"}, "extend": {Title: "Extend the share"},
				"stop": {Title: "Stop sharing"}, "status": {Title: "Share status"}, "link": {Title: "Share link (QR code)"},
			},
			Widgets:     map[string]UIText{"status": {Title: "Payment code sharing", Description: "Whether your payment code is being shared, and until when."}},
			Screens:     map[string]UIText{"main": {Title: "Payment code sharing"}},
			Settings:    map[string]SettingText{"main": {Title: "Payment code sharing", Subtitle: "Share the campus card code with a friend"}},
			DataSources: map[string]UIText{"status": {Title: "Share status"}},
			Commands:    map[string]CommandText{"card-share": {Description: "Open payment code sharing"}},
		},
	},
	Instructions: cardShareInstructions,
	DataSources:  []DataSource{{Name: "status", Title: "分享状态", Tool: "status", TTL: 10 * time.Second}},
	Widgets:      []UI{{Name: "status", Document: cardShareWidget}},
	Screens:      []UI{{Name: "main", Document: cardShareScreen}},
	Settings:     []Setting{{Screen: "main", Title: "付款码共享", Subtitle: "把校园卡付款码分享给朋友", Icon: "qr"}},
	Commands:     []Command{{Name: "card-share", Description: "打开付款码共享", Screen: "main"}},
	Tools: []*Tool{
		{Name: "start", Title: "分享付款码", Effect: plugin.EffectMoney, Run: Func(cardShareStart),
			Description: "Start sharing the campus card payment code live with one person for 30 minutes through an end-to-end encrypted Cloud channel; the first person to open the link holds the only seat. The link is shown to the user only as a QR code on the card-share screen (result.screen); you never see it. Starting when a share runs returns that share."},
		{Name: "extend", Title: "延长分享", Effect: plugin.EffectMoney, Run: Func(cardShareExtend),
			Description: fmt.Sprintf("Extend the running share by minutes (default 15); a share never has more than %d minutes left.", int(CardShareExtendMax/time.Minute))},
		{Name: "stop", Title: "结束分享", Effect: plugin.EffectWrite, Run: Func(cardShareStop),
			Description: "Stop sharing the payment code now: the viewer's page shows the share ended and no more codes are sent."},
		{Name: "status", Title: "分享状态", Effect: plugin.EffectRead, Run: Func(cardShareStatus),
			Description: "Whether the payment code is being shared, until when (Unix ms), whether the viewer is online, how many codes were sent, and the last problem refreshing the code."},
		{Name: "link", Title: "分享链接(二维码)", Effect: plugin.EffectRead, UserOnly: true, Run: Func(cardShareLink),
			Description: "The share link, for the card-share screen's QR code only (user only)."},
	},
}
