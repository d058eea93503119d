package abilities

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pkuinfo/harness/host/campus"
	"github.com/pkuinfo/harness/plugin"
)

// treeholeStandIn follows docs/CAMPUS-PROTOCOLS.md §5.3–§5.5: 40002 until the login
// SMS check passes, 40077 on course endpoints until a course token is
// granted, codes checked against smsCode and the TOTP of otpSecret.
type treeholeStandIn struct {
	mu          sync.Mutex
	needLogin   bool
	needCourse  bool
	smsCode     string
	otpSecret   string
	now         func() time.Time
	notExpired  bool   // send-SMS answers "还未过期"
	failureBody string // when set, data endpoints answer this
	log         []string
}

func (th *treeholeStandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	th.mu.Lock()
	defer th.mu.Unlock()
	b, _ := io.ReadAll(r.Body)
	entry := r.Method + " " + r.URL.RequestURI()
	if len(b) > 0 {
		entry += " " + string(b)
	}
	th.log = append(th.log, entry)
	if r.Header.Get("Authorization") != "Bearer jwt-1" || !strings.HasPrefix(r.Header.Get("Uuid"), "Web_PKUHOLE_2.0.0_WEB_UUID_") {
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"code":401,"success":false,"message":"登录已失效"}`))
		return
	}
	var body struct {
		Code      string `json:"code"`
		ValidCode string `json:"valid_code"`
	}
	json.Unmarshal(b, &body)
	reply := func(code int, ok bool, msg, data string) {
		fmt.Fprintf(w, `{"code":%d,"success":%v,"message":%q,"data":%s,"timestamp":1898812800}`, code, ok, msg, data)
	}
	switch r.URL.Path {
	case "/chapi/api/jwt_send_msg", "/chapi/api/course/send_get_token_message":
		if th.notExpired {
			reply(40000, false, "验证码还未过期,请使用之前收到的验证码", "null")
			return
		}
		reply(20000, true, "发送成功", "{}")
	case "/chapi/api/jwt_msg_verify":
		if body.ValidCode != th.smsCode {
			reply(40001, false, "验证码错误", "null")
			return
		}
		th.needLogin = false
		reply(20000, true, "验证成功", "{}")
	case "/chapi/api/course/mobile_message_get_token", "/chapi/api/course/password_get_token":
		want := th.smsCode
		if strings.HasSuffix(r.URL.Path, "password_get_token") {
			want, _ = Code(th.otpSecret, th.now())
		}
		if body.Code != want {
			reply(40001, false, "验证码错误", "null")
			return
		}
		th.needCourse = false
		reply(20000, true, "授权成功", "{}")
	default:
		switch {
		case th.needLogin:
			reply(40002, false, "请先完成短信验证", "null")
		case th.needCourse && strings.HasPrefix(r.URL.Path, "/chapi/api/course/"):
			reply(40077, false, "获取授权码", "null")
		case th.failureBody != "":
			w.Write([]byte(th.failureBody))
		default:
			reply(20000, true, "success", `{"score":{"gpa":{"gpa":"3.812","xxxf":"5"}}}`)
		}
	}
}

func (th *treeholeStandIn) takeLog() []string {
	th.mu.Lock()
	defer th.mu.Unlock()
	l := th.log
	th.log = nil
	return l
}

const otpSecret = "JBSWY3DPEHPK3PXP"

// verifySet returns a Set whose campus client reaches th, signed in to
// Treehole.
func verifySet(t *testing.T, th *treeholeStandIn) (*Set, *clock) {
	t.Helper()
	srv := httptest.NewServer(th)
	t.Cleanup(srv.Close)
	ss := &campus.MemorySessions{}
	ss.Put(context.Background(), &campus.Session{Service: "treehole", Token: "jwt-1", Device: "0123456789ab"})
	cl := &campus.Client{Sessions: ss, Bases: map[string]string{"treehole": srv.URL}}
	s, clk := newTestSet(t, WithCampus(cl))
	th.now = clk.now
	th.smsCode, th.otpSecret = "246810", otpSecret
	return s, clk
}

const (
	scoreReq   = `{"request":{"url":"/chapi/api/course/score_v2"},"kind":"course"}`
	scoreOK    = `{"code":20000,"success":true,"message":"success","data":{"score":{"gpa":{"gpa":"3.812","xxxf":"5"}}},"timestamp":1898812800}`
	needCourse = `{"status":"verification_required","kind":"course","methods":["sms","otp"],"message":"树洞需要验证后才能查看课程数据：填入手机令牌（IAAA 身份验证器）的 6 位验证码，或先发送短信验证码再填入。","next":"verify.treeholeSendCode"}`
	needLogin  = `{"status":"verification_required","kind":"login","methods":["sms"],"message":"树洞需要短信验证：先发送验证码，再填入短信里的 6 位数字。","next":"verify.treeholeSendCode"}`
)

func TestVerifyFlow(t *testing.T) {
	r, w := plugin.EffectRead, plugin.EffectWrite
	tests := []struct {
		name     string
		th       *treeholeStandIn
		otp      bool // store the authenticator secret first
		steps    []step
		requests []string
	}{
		{
			name: "SMS needed at login: send, then redeem and retry",
			th:   &treeholeStandIn{needLogin: true},
			steps: []step{
				{op: "verify.treehole", effect: r, args: `{"request":{"url":"/chapi/api/v3/events/list?page=1"}}`, want: needLogin},
				{op: "verify.treeholeSendCode", effect: w, args: `{}`, want: `{"kind":"login","message":"发送成功"}`},
				{op: "verify.treehole", effect: r, args: `{"request":{"url":"/chapi/api/v3/events/list?page=1"},"code":"246810","via":"sms"}`,
					want: `{"code":20000,"success":true,"message":"success","data":{"score":{"gpa":{"gpa":"3.812","xxxf":"5"}}},"timestamp":1898812800}`},
			},
			requests: []string{
				"GET /chapi/api/v3/events/list?page=1",
				"POST /chapi/api/jwt_send_msg {}",
				`POST /chapi/api/jwt_msg_verify {"valid_code":"246810"}`,
				"GET /chapi/api/v3/events/list?page=1",
			},
		},
		{
			name: "a wrong SMS code fails with Treehole's message",
			th:   &treeholeStandIn{needLogin: true},
			steps: []step{
				{op: "verify.treehole", effect: r, args: `{"request":{"url":"/chapi/api/v3/lab_events"}}`, want: needLogin},
				{op: "verify.treehole", effect: r, args: `{"request":{"url":"/chapi/api/v3/lab_events"},"code":"111111"}`, isErr: true,
					want: "ability verify.treehole: Treehole: 验证码错误 (code 40001)"},
				{op: "verify.treehole", effect: r, args: `{"request":{"url":"/chapi/api/v3/lab_events"},"code":"111111","via":"otp"}`, isErr: true,
					want: "ability verify.treehole: Treehole's login check takes an SMS code only (via: sms)"},
			},
			requests: []string{
				"GET /chapi/api/v3/lab_events",
				`POST /chapi/api/jwt_msg_verify {"valid_code":"111111"}`,
			},
		},
		{
			name: "course token with a stored authenticator: tried on its own",
			th:   &treeholeStandIn{needCourse: true},
			otp:  true,
			steps: []step{
				{op: "verify.treehole", effect: r, args: scoreReq, want: scoreOK},
			},
			requests: []string{
				"GET /chapi/api/course/score_v2",
				`POST /chapi/api/course/password_get_token {"code":"%OTP%"}`,
				"GET /chapi/api/course/score_v2",
			},
		},
		{
			name: "course token without an authenticator: ask, then SMS",
			th:   &treeholeStandIn{needCourse: true},
			steps: []step{
				{op: "verify.treehole", effect: r, args: scoreReq, want: needCourse},
				{op: "verify.treeholeSendCode", effect: w, args: `{"kind":"login"}`, want: `{"kind":"course","message":"发送成功"}`},
				{op: "verify.treehole", effect: r, args: `{"request":{"url":"/chapi/api/course/score_v2"},"code":"246810","via":"sms","kind":"course"}`, want: scoreOK},
			},
			requests: []string{
				"GET /chapi/api/course/score_v2",
				"POST /chapi/api/course/send_get_token_message {}",
				`POST /chapi/api/course/mobile_message_get_token {"code":"246810"}`,
				"GET /chapi/api/course/score_v2",
			},
		},
		{
			name: "course token without an authenticator: the user's authenticator code",
			th:   &treeholeStandIn{needCourse: true},
			steps: []step{
				{op: "verify.treehole", effect: r, args: scoreReq, want: needCourse},
				{op: "verify.treehole", effect: r, args: `{"request":{"url":"/chapi/api/course/score_v2"},"code":"%OTP%","via":"otp"}`, want: scoreOK},
			},
			requests: []string{
				"GET /chapi/api/course/score_v2",
				`POST /chapi/api/course/password_get_token {"code":"%OTP%"}`,
				"GET /chapi/api/course/score_v2",
			},
		},
		{
			name: "the stored authenticator is refused: ask the user",
			th:   &treeholeStandIn{needCourse: true, otpSecret: "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"},
			otp:  true,
			steps: []step{
				{op: "verify.treehole", effect: r, args: scoreReq, want: needCourse},
			},
			requests: []string{
				"GET /chapi/api/course/score_v2",
				`POST /chapi/api/course/password_get_token {"code":"%OTP%"}`,
			},
		},
		{
			name: "a reply without success: true fails with Treehole's message",
			th:   &treeholeStandIn{failureBody: `{"code":20000,"message":"服务繁忙"}`},
			steps: []step{
				{op: "verify.treehole", effect: r, args: `{"request":{"url":"/chapi/api/v3/events/list","query":{"startTime":"2030-03-04","limit":20}}}`, isErr: true,
					want: "ability verify.treehole: Treehole: 服务繁忙 (code 20000)"},
			},
			requests: []string{"GET /chapi/api/v3/events/list?startTime=2030-03-04&limit=20"},
		},
		{
			name: "success false with no message",
			th:   &treeholeStandIn{failureBody: `{"code":50000,"success":false}`},
			steps: []step{
				{op: "verify.treehole", effect: r, args: `{"request":{"url":"/x"}}`, isErr: true,
					want: "ability verify.treehole: Treehole: the reply has no success: true (code 50000)"},
			},
			requests: []string{"GET /x"},
		},
		{
			name: "a reply that is not JSON",
			th:   &treeholeStandIn{failureBody: `<html>维护中</html>`},
			steps: []step{
				{op: "verify.treehole", effect: r, args: `{"request":{"url":"/x"}}`, isErr: true,
					want: "ability verify.treehole: treehole GET /x: the reply (HTTP 200) is not a JSON object"},
			},
			requests: []string{"GET /x"},
		},
		{
			name: "not expired yet counts as sent; nothing pending needs kind",
			th:   &treeholeStandIn{notExpired: true},
			steps: []step{
				{op: "verify.treeholeSendCode", effect: w, args: `{}`, isErr: true, want: "ability verify.treeholeSendCode: no Treehole check is pending: pass kind (login or course)"},
				{op: "verify.treeholeSendCode", effect: w, args: `{"kind":"course"}`, want: `{"kind":"course","message":"验证码还未过期,请使用之前收到的验证码"}`},
				{op: "verify.treeholeSendCode", effect: r, args: `{"kind":"course"}`, isErr: true, want: "ability verify.treeholeSendCode: the operation is write, stronger than this read tool"},
			},
			requests: []string{"POST /chapi/api/course/send_get_token_message {}"},
		},
		{
			name: "bad arguments",
			steps: []step{
				{op: "verify.treehole", effect: r, args: `{"request":{"url":"https://evil.example/"}}`, isErr: true,
					want: `ability verify.treehole: request: url must be a path on Treehole starting with / (got "https://evil.example/")`},
				{op: "verify.treehole", effect: r, args: `{"request":{"url":"/x"},"via":"email"}`, isErr: true, want: `ability verify.treehole: via must be sms or otp, not "email"`},
				{op: "verify.treehole", effect: r, args: `{"request":{"url":"/x"},"code":"123456"}`, isErr: true,
					want: "ability verify.treehole: a code was given but no Treehole check is pending: pass kind (login or course)"},
				{op: "verify.treehole", effect: r, args: `{"request":"/x"}`, isErr: true,
					want: "ability verify.treehole: request must be an object { url, method?, query?, headers?, json? | body? | form? }, not string"},
				{plugin: "q", op: "verify.treehole", effect: r, args: `{"request":{"url":"/x"}}`, isErr: true,
					want: "ability verify.treehole: verify is not in the abilities of plugin q"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			th := tc.th
			if th == nil {
				th = &treeholeStandIn{}
			}
			secret := th.otpSecret
			s, clk := verifySet(t, th)
			if secret != "" {
				th.otpSecret = secret // Treehole expects a different authenticator
			}
			if tc.otp {
				if err := SetOTPSecret(context.Background(), s.db, otpSecret, clk.t); err != nil {
					t.Fatal(err)
				}
			}
			code, _ := Code(otpSecret, clk.t)
			for i := range tc.steps {
				tc.steps[i].args = strings.ReplaceAll(tc.steps[i].args, "%OTP%", code)
			}
			runSteps(t, s, tc.steps)
			got := th.takeLog()
			want := make([]string, len(tc.requests))
			for i, r := range tc.requests {
				want[i] = strings.ReplaceAll(r, "%OTP%", code)
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("Treehole saw:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func TestVerifyNotSignedIn(t *testing.T) {
	s, _ := newTestSet(t, WithCampus(&campus.Client{Sessions: &campus.MemorySessions{}}))
	runSteps(t, s, []step{
		{op: "verify.treehole", effect: plugin.EffectRead, args: `{"request":{"url":"/x"}}`, isErr: true,
			want: "ability verify.treehole: not signed in to treehole: run harness campus login treehole"},
	})
}

func TestVerifySessionExpired(t *testing.T) {
	th := &treeholeStandIn{}
	srv := httptest.NewServer(th)
	defer srv.Close()
	ss := &campus.MemorySessions{}
	ss.Put(context.Background(), &campus.Session{Service: "treehole", Token: "old-jwt"})
	s, _ := newTestSet(t, WithCampus(&campus.Client{Sessions: ss, Bases: map[string]string{"treehole": srv.URL}}))
	runSteps(t, s, []step{
		{op: "verify.treehole", effect: plugin.EffectRead, args: `{"request":{"url":"/x"}}`, isErr: true,
			want: "ability verify.treehole: not signed in to treehole: the session expired (HTTP 401): run harness campus login treehole"},
	})
}

// A pending check is forgotten after PendingTTL.
func TestVerifyPendingExpires(t *testing.T) {
	th := &treeholeStandIn{needLogin: true}
	s, clk := verifySet(t, th)
	runSteps(t, s, []step{{op: "verify.treehole", effect: plugin.EffectRead, args: `{"request":{"url":"/x"}}`, want: needLogin}})
	clk.t = clk.t.Add(PendingTTL + time.Second)
	runSteps(t, s, []step{{op: "verify.treeholeSendCode", effect: plugin.EffectWrite, args: `{}`, isErr: true,
		want: "ability verify.treeholeSendCode: no Treehole check is pending: pass kind (login or course)"}})
}

func httptestServer(t *testing.T, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}
