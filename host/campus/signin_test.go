package campus

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/pkuinfo/harness/host/campus/campustest"
	"github.com/pkuinfo/harness/host/store"
)

type rig struct {
	stand  *campustest.Stand
	db     *store.DB
	ss     *SQLSessions
	acc    *Accounts
	signer *Signer
	client *Client
}

func newRig(t testing.TB) *rig {
	t.Helper()
	st := campustest.New()
	t.Cleanup(st.Close)
	db, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	r := &rig{stand: st, db: db, ss: NewSQLSessions(db), acc: NewAccounts(db)}
	r.signer = &Signer{Sessions: r.ss, Accounts: r.acc, Bases: st.Bases()}
	r.client = &Client{Sessions: r.ss, Bases: st.Bases(), Renew: r.signer.Renew}
	return r
}

func code(secret string) string {
	c, _ := totp.GenerateCodeCustom(secret, time.Now(), totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	return c
}

func TestPasswordSignInEveryService(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	for _, svc := range Services {
		res := r.signer.SignIn(ctx, svc.Name, campustest.User, campustest.Password, SignInOptions{})
		if !res.OK {
			t.Fatalf("%s: %v", svc.Name, res.Err)
		}
		s, ok, err := r.ss.Get(ctx, svc.Name)
		if err != nil || !ok {
			t.Fatalf("%s: no session stored: %v", svc.Name, err)
		}
		switch svc.Name {
		case "treehole":
			if s.Token == "" || len(s.Device) != 12 || s.Expires.Before(time.Now().Add(6*24*time.Hour)) || s.Cookies["pku_uid"] != campustest.User {
				t.Errorf("treehole session %+v", s)
			}
		case "card":
			if strings.Count(s.Token, ".") != 2 || s.Expires.Sub(time.Now()) < 23*time.Hour {
				t.Errorf("card session %+v", s)
			}
		default:
			if s.Cookies["JSESSIONID"] == "" {
				t.Errorf("%s session %+v", svc.Name, s)
			}
		}
		// The session works against the stand-in.
		path := map[string]string{"card": "/berserker-app/ykt/tsm/queryCard", "treehole": "/chapi/api/v3/hole/list?page=1", "its": "/netportal/itsUtil?operation=info"}[svc.Name]
		if path == "" {
			path = "/home"
		}
		req, _ := http.NewRequest("GET", path, nil)
		resp, err := r.client.Do(ctx, svc.Name, req)
		if err != nil {
			t.Fatalf("%s: %v", svc.Name, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || strings.Contains(string(b), `"code":401`) {
			t.Errorf("%s: HTTP %d %s", svc.Name, resp.StatusCode, b)
		}
	}
	// One IAAA sign-in per IAAA service (ITS has its own account).
	if n := r.stand.Count("iaaa POST /iaaa/oauthlogin.do"); n != len(Services)-1 {
		t.Errorf("%d IAAA sign-ins, want %d", n, len(Services)-1)
	}
}

func TestSignInFailures(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name, service, password string
		setup                   func(*campustest.Stand)
		otp                     string
		wantCode, zh, en        string
	}{
		{name: "wrong password", service: "card", password: "nope", wantCode: "E01", zh: "IAAA：用户名或密码错误", en: "IAAA: wrong user name or password"},
		{name: "activation", service: "treehole", password: campustest.Password, setup: func(s *campustest.Stand) { s.NeedsActivation = true },
			wantCode: "E02", zh: "IAAA：账号需要激活：请先在 iaaa.pku.edu.cn 激活账号", en: "IAAA: the account needs activation: activate it at iaaa.pku.edu.cn first"},
		{name: "authenticator bound, no code", service: "card", password: campustest.Password, setup: func(s *campustest.Stand) { s.OTPSecret = campustest.BindSecret },
			wantCode: "E21", zh: "IAAA：手机令牌验证码错误 (E21)", en: "IAAA: 手机令牌验证码错误 (E21)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			if tc.setup != nil {
				r.stand.Set(tc.setup)
			}
			res := r.signer.SignIn(ctx, tc.service, campustest.User, tc.password, SignInOptions{OTPCode: tc.otp})
			var ie *IAAAError
			if res.OK || !errors.As(res.Err, &ie) || ie.Code != tc.wantCode {
				t.Fatalf("got %+v", res)
			}
			if ie.Message("zh-Hans") != tc.zh || ie.Message("en") != tc.en {
				t.Errorf("messages %q / %q", ie.Message("zh-Hans"), ie.Message("en"))
			}
			if _, ok, _ := r.ss.Get(ctx, tc.service); ok {
				t.Error("a session was stored after a refusal")
			}
		})
	}
	// ITS refuses with its alert page.
	r := newRig(t)
	if res := r.signer.SignIn(ctx, "its", campustest.User, "nope", SignInOptions{}); res.OK || res.Error != "its: 账号或密码错误" {
		t.Fatalf("its: %+v", res)
	}
}

func TestPasswordWithAuthenticator(t *testing.T) {
	ctx := context.Background()
	for _, via := range []string{"stored", "typed"} {
		r := newRig(t)
		r.stand.Set(func(s *campustest.Stand) { s.OTPSecret = campustest.BindSecret })
		opt := SignInOptions{}
		if via == "stored" {
			r.signer.OTP = func(context.Context) (string, bool, error) { return code(campustest.BindSecret), true, nil }
		} else {
			opt.OTPCode = code(campustest.BindSecret)
		}
		if res := r.signer.SignIn(ctx, "card", campustest.User, campustest.Password, opt); !res.OK {
			t.Fatalf("%s: %v", via, res.Err)
		}
	}
}

func TestQRSignIn(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name            string
		scan, expire    int
		activation      bool
		wantCode        string
		wantPolls       int
		wantSleepsAtMin time.Duration
	}{
		{name: "scanned on the third poll", scan: 3, wantPolls: 3},
		{name: "expired", expire: 2, wantCode: "E99", wantPolls: 2},
		{name: "activation needed", scan: 1, activation: true, wantCode: "E02", wantPolls: 1},
		{name: "never scanned", wantCode: "E99", wantPolls: QRPolls},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			r.stand.Set(func(s *campustest.Stand) {
				s.QRScanAfter, s.QRExpireAfter, s.NeedsActivation = tc.scan, tc.expire, tc.activation
			})
			app, _ := r.signer.App(ctx, "treehole")
			iaaa := &IAAA{Base: r.stand.URL("iaaa")}
			q, err := iaaa.StartQR(ctx, app)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(q.ContentType, "image/png") || len(q.Image) < 100 {
				t.Fatalf("QR image %q %d bytes", q.ContentType, len(q.Image))
			}
			var sleeps []time.Duration
			tok, err := q.Poll(ctx, func(_ context.Context, d time.Duration) error { sleeps = append(sleeps, d); return nil })
			if n := r.stand.Count("iaaa POST /iaaa/oauthlogin4QRCode.do"); n != tc.wantPolls {
				t.Errorf("%d polls, want %d", n, tc.wantPolls)
			}
			for _, d := range sleeps {
				if d < QRInterval || d > QRInterval+QRJitter {
					t.Errorf("slept %v", d)
				}
			}
			if tc.wantCode != "" {
				var ie *IAAAError
				if !errors.As(err, &ie) || ie.Code != tc.wantCode {
					t.Fatalf("err %v, want %s", err, tc.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res := r.signer.SignInWithToken(ctx, "treehole", tok, SignInOptions{}); !res.OK {
				t.Fatal(res.Err)
			}
		})
	}
}

func TestBindWithLateSMS(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	iaaa := &IAAA{Base: r.stand.URL("iaaa")}
	if _, err := iaaa.BindStart(ctx, campustest.User, "nope", time.Now()); err == nil || !strings.Contains(err.Error(), "用户名或密码错误") {
		t.Fatalf("wrong password: %v", err)
	}
	st, err := iaaa.BindStart(ctx, campustest.User, campustest.Password, time.Now())
	if err != nil || st.MobileMask != "138****0000" {
		t.Fatalf("%+v %v", st, err)
	}
	if err := r.acc.SavePending(ctx, st); err != nil {
		t.Fatal(err)
	}
	// Later, another process: the state comes back from the database.
	later, ok, err := NewAccounts(r.db).PendingBind(ctx)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	gen := func(s string) (string, error) { return code(s), nil }
	if _, err := iaaa.BindFinish(ctx, later, "000000", gen); err == nil || !strings.Contains(err.Error(), "短信验证码错误") {
		t.Fatalf("wrong SMS: %v", err)
	}
	secret, err := iaaa.BindFinish(ctx, later, campustest.SMSCode, gen)
	if err != nil || secret != campustest.BindSecret {
		t.Fatalf("%q %v", secret, err)
	}
	// IAAA now wants the authenticator.
	var bound string
	r.stand.Set(func(s *campustest.Stand) { bound = s.OTPSecret })
	if bound != campustest.BindSecret {
		t.Fatalf("stand-in bound %q", bound)
	}
}

func TestTreeholeSMSCheck(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	r.stand.Set(func(s *campustest.Stand) { s.TreeholeSMS = true })
	res := r.signer.SignIn(ctx, "treehole", campustest.User, campustest.Password, SignInOptions{})
	if !res.OK || res.Pending != "sms" {
		t.Fatalf("without a prompt: %+v", res)
	}
	asked := ""
	res = r.signer.SignIn(ctx, "treehole", campustest.User, campustest.Password, SignInOptions{
		SMS: func(_ context.Context, service, msg string) (string, error) {
			asked = msg
			return campustest.SMSCode, nil
		}})
	if !res.OK || res.Pending != "" || !strings.Contains(asked, "发送成功") {
		t.Fatalf("with a prompt: %+v, asked %q", res, asked)
	}
	if r.stand.Count("treehole POST /chapi/api/jwt_msg_verify") != 1 {
		t.Error("no jwt_msg_verify")
	}
}

func TestExpiredSessionRenewal(t *testing.T) {
	ctx := context.Background()
	for _, svc := range []string{"card", "treehole", "its", "elective"} {
		for _, remember := range []bool{true, false} {
			r := newRig(t)
			if err := r.acc.Save(ctx, AccountIAAA, campustest.User, campustest.Password, remember, time.Now()); err != nil {
				t.Fatal(err)
			}
			if res := r.signer.SignIn(ctx, svc, campustest.User, campustest.Password, SignInOptions{}); !res.OK {
				t.Fatal(res.Err)
			}
			r.stand.Expire(svc)
			path := map[string]string{"card": "/berserker-app/ykt/tsm/queryCard", "treehole": "/chapi/api/v3/hole/list", "its": "/netportal/itsUtil?operation=info", "elective": "/elective2008/x"}[svc]
			req, _ := http.NewRequest("GET", path, nil)
			resp, err := r.client.Do(ctx, svc, req)
			if !remember {
				var ne *NotSignedInError
				if !errors.As(err, &ne) || !strings.HasPrefix(err.Error(), "not signed in to "+svc+": the session expired") ||
					!strings.HasSuffix(err.Error(), "run harness campus login "+svc) {
					t.Errorf("%s without a remembered password: %v", svc, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", svc, err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || strings.Contains(string(b), "401") {
				t.Errorf("%s after renewal: %d %s", svc, resp.StatusCode, b)
			}
		}
	}
	// A session past its recorded expiry is renewed before it is used.
	r := newRig(t)
	r.acc.Save(ctx, AccountIAAA, campustest.User, campustest.Password, true, time.Now())
	r.ss.Put(ctx, &Session{Service: "card", Token: "old.jwt.x", Created: time.Now(), Expires: time.Now().Add(-time.Minute)})
	req, _ := http.NewRequest("GET", "/berserker-app/ykt/tsm/queryCard", nil)
	resp, err := r.client.Do(ctx, "card", req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if r.stand.Count("iaaa POST /iaaa/oauthlogin.do") != 1 {
		t.Error("not renewed by IAAA sign-in")
	}
	// A service that refuses the fresh session is not sent to IAAA again within RenewEvery.
	r.stand.Expire("card")
	req, _ = http.NewRequest("GET", "/berserker-app/ykt/tsm/queryCard", nil)
	if _, err = r.client.Do(ctx, "card", req); err == nil || !strings.Contains(err.Error(), "the service still refuses the session") {
		t.Fatalf("second renewal within a minute: %v", err)
	}
	if n := r.stand.Count("iaaa POST /iaaa/oauthlogin.do"); n != 1 {
		t.Fatalf("%d IAAA sign-ins, want 1", n)
	}
	later := time.Now().Add(RenewEvery + time.Second)
	r.signer.Now = func() time.Time { return later }
	// A renewal that fails says so and still names the command.
	r.stand.Expire("card")
	r.acc.Save(ctx, AccountIAAA, campustest.User, "changed-since", true, time.Now())
	req, _ = http.NewRequest("POST", "/berserker-app/ykt/tsm/queryCard", strings.NewReader(`{}`))
	_, err = r.client.Do(ctx, "card", req)
	if err == nil || !strings.Contains(err.Error(), "signing in again failed: IAAA: wrong user name or password; the remembered password is forgotten, so it is not tried again: run harness campus login card") {
		t.Fatalf("failed renewal: %v", err)
	}
}

func TestEndpointsFromEnv(t *testing.T) {
	t.Setenv(EndpointsEnv, "iaaa=http://127.0.0.1:1/,card=https://x")
	m, err := EndpointsFromEnv()
	if err != nil || m["iaaa"] != "http://127.0.0.1:1" || m["card"] != "https://x" {
		t.Fatal(m, err)
	}
	for _, bad := range []string{"nope=http://x", "iaaa=ftp://x", "iaaa"} {
		t.Setenv(EndpointsEnv, bad)
		if _, err := EndpointsFromEnv(); err == nil || !strings.Contains(err.Error(), EndpointsEnv) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// A sign-in that left Treehole's SMS check pending is finished later with the stored session.
func TestTreeholeSMSLater(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	r.stand.Set(func(s *campustest.Stand) { s.TreeholeSMS = true })
	if res := r.signer.SignIn(ctx, "treehole", campustest.User, campustest.Password, SignInOptions{}); res.Pending != "sms" {
		t.Fatalf("%+v", res)
	}
	if msg, err := TreeholeSMS(ctx, r.client, ""); err != nil || msg != "发送成功" {
		t.Fatalf("send: %q %v", msg, err)
	}
	// Sent again while the first code is valid: Treehole says 未过期, which counts as sent.
	if msg, err := TreeholeSMS(ctx, r.client, ""); err != nil || msg != "验证码还未过期" {
		t.Fatalf("send again: %q %v", msg, err)
	}
	if _, err := TreeholeSMS(ctx, r.client, "000000"); err == nil || err.Error() != "treehole: 验证码错误" {
		t.Fatalf("wrong code: %v", err)
	}
	if _, err := TreeholeSMS(ctx, r.client, campustest.SMSCode); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", "/chapi/api/v3/hole/list", nil)
	resp, err := r.client.Do(ctx, "treehole", req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `"code":20000`) {
		t.Fatalf("after the check: %s", b)
	}
}

// A hop that cannot reach its service says so without quoting the IAAA token from the URL.
func TestHopErrorHidesToken(t *testing.T) {
	r := newRig(t)
	bases := r.stand.Bases()
	bases["treehole"] = "http://127.0.0.1:1" // nothing listens there
	r.signer.Bases = bases
	res := r.signer.SignIn(context.Background(), "treehole", campustest.User, campustest.Password, SignInOptions{})
	if res.OK || !strings.Contains(res.Error, "treehole cas_iaaa_login") || strings.Contains(res.Error, "iaaa-") || !strings.Contains(res.Error, "[redacted]") {
		t.Fatalf("%s", res.Error)
	}
}

// The card's expiry check reads the reply and puts it back whole, however long.
func TestCardReplyKeptWhole(t *testing.T) {
	big := `{"code":200,"success":true,"data":"` + strings.Repeat("x", 200<<10) + `"}`
	for _, body := range []string{big, `{"code":200}`, `not json`} {
		resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/plain"}}, Body: io.NopCloser(strings.NewReader(body))}
		if why := Lookup("card").expiredReply(resp); why != "" {
			t.Fatalf("expired: %s", why)
		}
		got, _ := io.ReadAll(resp.Body)
		if string(got) != body {
			t.Fatalf("body changed: %d bytes, want %d", len(got), len(body))
		}
	}
	resp := &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(`{"code":401,"success":false,"message":"登录已过期"}`))}
	if why := Lookup("card").expiredReply(resp); why != "the session expired (card: 登录已过期)" {
		t.Fatalf("got %q", why)
	}
}

// IAAA locks an account after failed attempts: a remembered password that IAAA (or ITS) refuses
// is tried once, then forgotten, so neither a later request, another service, another minute nor
// another process sends it again.
func TestWrongRememberedPasswordTriedOnce(t *testing.T) {
	ctx := context.Background()
	for _, svc := range []string{"card", "its"} {
		t.Run(svc, func(t *testing.T) {
			r := newRig(t)
			others := map[string][]string{"card": {"treehole"}}[svc]
			for _, s := range append([]string{svc}, others...) {
				if res := r.signer.SignIn(ctx, s, campustest.User, campustest.Password, SignInOptions{}); !res.OK {
					t.Fatal(res.Err)
				}
			}
			// The password changed since the host remembered it.
			r.acc.Save(ctx, AccountIAAA, campustest.User, "changed-since", true, time.Now())
			r.stand.Expire(svc)
			r.stand.Expire("treehole")
			attempts := func() int {
				return r.stand.Count("iaaa POST /iaaa/oauthlogin.do") + r.stand.Count("its POST /cas/webLogin")
			}
			before := attempts()
			path := map[string]string{"card": "/berserker-app/ykt/tsm/queryCard", "its": "/netportal/itsUtil?operation=info"}[svc]
			req, _ := http.NewRequest("GET", path, nil)
			_, err := r.client.Do(ctx, svc, req)
			if err == nil || !strings.Contains(err.Error(), "the remembered password is forgotten") || !strings.HasSuffix(err.Error(), "run harness campus login "+svc) {
				t.Fatalf("first refusal: %v", err)
			}
			// ITS refused the IAAA password it fell back to: ITS no longer falls back to it (its
			// own account may differ), IAAA's is left for IAAA to judge.
			account := map[string]string{"card": AccountIAAA, "its": AccountITS}[svc]
			if _, remembered, _, _ := r.acc.User(ctx, account); remembered {
				t.Error("the refused password is still remembered")
			}
			later := time.Now().Add(RenewEvery + time.Second)
			r.signer.Now = func() time.Time { return later }
			for _, s := range append(append([]string{svc}, others...), svc) {
				p := map[string]string{"treehole": "/chapi/api/v3/hole/list"}[s]
				if p == "" {
					p = path
				}
				req, _ := http.NewRequest("GET", p, nil)
				var ne *NotSignedInError
				if _, err := r.client.Do(ctx, s, req); !errors.As(err, &ne) {
					t.Fatalf("%s after the refusal: %v", s, err)
				}
			}
			// Another process: a fresh Signer on the same database.
			fresh := &Signer{Sessions: r.ss, Accounts: NewAccounts(r.db), Bases: r.stand.Bases()}
			if err := fresh.Renew(ctx, svc); !errors.Is(err, ErrNoRemembered) {
				t.Fatalf("another process: %v", err)
			}
			if n := attempts() - before; n != 1 {
				t.Fatalf("the wrong password was sent %d times, want once", n)
			}
		})
	}
}

// IAAA issues its token for the redirect URL the service registered: the hops ask for the URLs of
// docs/CAMPUS-PROTOCOLS.md §2.1 exactly (elective and bdkj over http), and a stand-in's base when one is set.
func TestHopRedirectsAsDocumented(t *testing.T) {
	s := &Signer{Sessions: &MemorySessions{}}
	want := map[string]App{
		"card":     {ID: "portal2017", Redirect: "https://portal.pku.edu.cn/portal2017/ssoLogin.do"},
		"elective": {ID: "syllabus", Redirect: "http://elective.pku.edu.cn:80/elective2008/ssoLogin.do"},
		"bdkj":     {ID: "bdkj", Redirect: "http://bdkj.pku.edu.cn/login/oauth"},
		"cwfw":     {ID: "IIPF", Redirect: "https://cwfw.pku.edu.cn/WFManager/home2.jsp"},
	}
	for svc, w := range want {
		if got, ok := s.App(context.Background(), svc); !ok || got != w {
			t.Errorf("%s: %+v, want %+v", svc, got, w)
		}
	}
	s.Bases = map[string]string{"elective": "http://127.0.0.1:9"}
	if got, _ := s.App(context.Background(), "elective"); got.Redirect != "http://127.0.0.1:9/elective2008/ssoLogin.do" {
		t.Errorf("elective on a stand-in: %+v", got)
	}
}

// A service that refuses every session, even a fresh one, costs one IAAA sign-in per RenewEvery,
// not one per process: each `harness tool run` is a process of its own, with a Signer of its own.
func TestRenewPacedAcrossProcesses(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	r.acc.Save(ctx, AccountIAAA, campustest.User, campustest.Password, true, time.Now())
	if res := r.signer.SignIn(ctx, "card", campustest.User, campustest.Password, SignInOptions{}); !res.OK {
		t.Fatal(res.Err)
	}
	before := r.stand.Count("iaaa POST /iaaa/oauthlogin.do")
	for i := 0; i < 3; i++ {
		r.stand.Expire("card")
		sg := &Signer{Sessions: NewSQLSessions(r.db), Accounts: NewAccounts(r.db), Bases: r.stand.Bases()}
		c := &Client{Sessions: sg.Sessions, Bases: r.stand.Bases(), Renew: sg.Renew}
		req, _ := http.NewRequest("GET", "/berserker-app/ykt/tsm/queryCard", nil)
		resp, err := c.Do(ctx, "card", req)
		if i == 0 {
			if err != nil {
				t.Fatalf("first renewal: %v", err)
			}
			resp.Body.Close()
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "the service still refuses the session") {
			t.Fatalf("process %d: %v", i, err)
		}
	}
	if n := r.stand.Count("iaaa POST /iaaa/oauthlogin.do") - before; n != 1 {
		t.Fatalf("%d IAAA sign-ins from three processes within a minute, want 1", n)
	}
}
