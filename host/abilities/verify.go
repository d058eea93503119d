package abilities

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/pkuinfo/harness/host/store"
	"github.com/pkuinfo/harness/lang/expr"
)

func init() {
	store.Register(store.Migration{Version: 104, Name: "pending Treehole check", SQL: `
CREATE TABLE verify_pending (
	service TEXT    PRIMARY KEY, -- "treehole"
	kind    TEXT    NOT NULL,    -- login or course
	at      INTEGER NOT NULL     -- Unix ms when Treehole asked
);`})
}

// Treehole's envelope codes and endpoints (docs/CAMPUS-PROTOCOLS.md §5.3–§5.5).
const (
	thNeedSMS      = 40002 // the login SMS check
	thNeedCourse   = 40077 // the course token
	thSendLogin    = "/chapi/api/jwt_send_msg"
	thVerifyLogin  = "/chapi/api/jwt_msg_verify"
	thSendCourse   = "/chapi/api/course/send_get_token_message"
	thCourseBySMS  = "/chapi/api/course/mobile_message_get_token"
	thCourseByOTP  = "/chapi/api/course/password_get_token"
	thMaxReply     = 2 << 20 // the interpreter's reply limit (seed 004 "Steps")
	pendingTTL     = 15 * time.Minute
	checkLogin     = "login"
	checkCourse    = "course"
	viaSMS, viaOTP = "sms", "otp"
)

// PendingTTL is how long a pending Treehole check is remembered; after it
// a code needs kind again.
const PendingTTL = pendingTTL

// verifyMessages are the messages of verification_required, by kind.
var verifyMessages = map[string]string{
	checkLogin:  "树洞需要短信验证：先发送验证码，再填入短信里的 6 位数字。",
	checkCourse: "树洞需要验证后才能查看课程数据：填入手机令牌（IAAA 身份验证器）的 6 位验证码，或先发送短信验证码再填入。",
}

// verifyTreehole is verify.treehole { request, code?, via?, kind? } (read),
// seed 004 "Second factors":
//
//  1. With a code, it redeems the code first (via sms: jwt_msg_verify for
//     the login check, course/mobile_message_get_token for the course
//     token; via otp: course/password_get_token), for the pending check,
//     or for kind when none is pending. A redemption without success: true
//     fails with Treehole's message.
//  2. It sends the request. On 40077 (course token needed) without a code
//     in this call, it tries the stored authenticator's code on its own and
//     repeats the request once.
//  3. On 40002 or 40077 it returns { status: 'verification_required',
//     kind, methods, message, next: 'verify.treeholeSendCode' } and records
//     the check as pending.
//  4. A reply with success: true is returned whole ({ code, success,
//     message, data, … }); any other reply fails with Treehole's message.
func (s *Set) verifyTreehole(ctx context.Context, c *call) (any, error) {
	if err := c.args.only("request", "code", "via", "kind"); err != nil {
		return nil, err
	}
	if err := s.requireTreehole(c); err != nil {
		return nil, err
	}
	req, err := treeholeRequest(c.args.get("request"))
	if err != nil {
		return nil, err
	}
	code, err := c.args.str("code", false, 16)
	if err != nil {
		return nil, err
	}
	via, err := c.args.str("via", false, 8)
	if err != nil {
		return nil, err
	}
	if via == "" {
		via = viaSMS
	}
	if via != viaSMS && via != viaOTP {
		return nil, fmt.Errorf("via must be sms or otp, not %q", via)
	}
	kind, err := kindArg(c)
	if err != nil {
		return nil, err
	}
	triedCourse := false
	if code != "" {
		check, err := s.pending(ctx)
		if err != nil {
			return nil, err
		}
		if check == "" {
			check = kind
		}
		if check == "" {
			return nil, errors.New("a code was given but no Treehole check is pending: pass kind (login or course)")
		}
		if err := s.redeem(ctx, check, via, code); err != nil {
			return nil, err
		}
		triedCourse = check == checkCourse
	}
	for attempt := 0; ; attempt++ {
		env, err := s.treehole(ctx, req)
		if err != nil {
			return nil, err
		}
		switch env.code {
		case thNeedSMS:
			return s.needVerification(ctx, checkLogin, []any{viaSMS})
		case thNeedCourse:
			if !triedCourse && attempt == 0 {
				triedCourse = true
				otpCode, ok, err := s.currentCode(ctx)
				if err != nil {
					return nil, err
				}
				if ok {
					r, err := s.treehole(ctx, thPost(thCourseByOTP, map[string]string{"code": otpCode}))
					if err != nil {
						return nil, err
					}
					if r.success {
						continue
					}
				}
			}
			return s.needVerification(ctx, checkCourse, []any{viaSMS, viaOTP})
		}
		if !env.success {
			return nil, treeholeFailure(env)
		}
		return env.value, nil
	}
}

// verifySendCode is verify.treeholeSendCode { kind? } (write): it sends the
// SMS of the pending check, or of kind when none is pending
// (jwt_send_msg for login, course/send_get_token_message for course). A
// reply saying the last code has not expired (未过期) counts as sent. The
// result is { kind, message }.
func (s *Set) verifySendCode(ctx context.Context, c *call) (any, error) {
	if err := c.args.only("kind"); err != nil {
		return nil, err
	}
	if err := s.requireTreehole(c); err != nil {
		return nil, err
	}
	kind, err := kindArg(c)
	if err != nil {
		return nil, err
	}
	check, err := s.pending(ctx)
	if err != nil {
		return nil, err
	}
	if check == "" {
		check = kind
	}
	if check == "" {
		return nil, errors.New("no Treehole check is pending: pass kind (login or course)")
	}
	path := thSendLogin
	if check == checkCourse {
		path = thSendCourse
	}
	env, err := s.treehole(ctx, thPost(path, map[string]string{}))
	if err != nil {
		return nil, err
	}
	if !env.success && !strings.Contains(env.message, "未过期") {
		return nil, treeholeFailure(env)
	}
	if err := s.setPending(ctx, check); err != nil {
		return nil, err
	}
	msg := env.message
	if msg == "" {
		msg = "验证码已发送"
	}
	return obj("kind", check, "message", msg), nil
}

// requireTreehole refuses a plugin that reaches Treehole through verify
// without declaring it in campus: the review sheet lists campus services
// from campus, so the sheet would not show it.
func (s *Set) requireTreehole(c *call) error {
	if c.man != nil && !slices.Contains(c.man.Campus, "treehole") {
		return fmt.Errorf("verify reaches Treehole with the user's session: plugin %s must list treehole in campus", c.Plugin)
	}
	if s.campus == nil {
		return errors.New("this host has no campus client")
	}
	return nil
}

func kindArg(c *call) (string, error) {
	kind, err := c.args.str("kind", false, 8)
	if err != nil {
		return "", err
	}
	if kind != "" && kind != checkLogin && kind != checkCourse {
		return "", fmt.Errorf("kind must be login or course, not %q", kind)
	}
	return kind, nil
}

// redeem trades a code for the check's grant.
func (s *Set) redeem(ctx context.Context, check, via, code string) error {
	var r *thRequest
	switch {
	case check == checkLogin && via == viaSMS:
		r = thPost(thVerifyLogin, map[string]string{"valid_code": code})
	case check == checkLogin:
		// docs/CAMPUS-PROTOCOLS.md §5.4: check_otp exists, but its body is unknown.
		return errors.New("Treehole's login check takes an SMS code only (via: sms)")
	case via == viaSMS:
		r = thPost(thCourseBySMS, map[string]string{"code": code})
	default:
		r = thPost(thCourseByOTP, map[string]string{"code": code})
	}
	env, err := s.treehole(ctx, r)
	if err != nil {
		return err
	}
	if !env.success {
		return treeholeFailure(env)
	}
	return s.setPending(ctx, "")
}

func (s *Set) needVerification(ctx context.Context, kind string, methods []any) (any, error) {
	if err := s.setPending(ctx, kind); err != nil {
		return nil, err
	}
	return obj("status", "verification_required", "kind", kind, "methods", methods,
		"message", verifyMessages[kind], "next", "verify.treeholeSendCode"), nil
}

func (s *Set) pending(ctx context.Context) (string, error) {
	var kind string
	var at int64
	err := s.db.SQL.QueryRowContext(ctx, `SELECT kind, at FROM verify_pending WHERE service = 'treehole'`).Scan(&kind, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the pending check: %w", err)
	}
	if s.now().Sub(time.UnixMilli(at)) > pendingTTL {
		return "", nil
	}
	return kind, nil
}

func (s *Set) setPending(ctx context.Context, kind string) error {
	var err error
	if kind == "" {
		_, err = s.db.SQL.ExecContext(ctx, `DELETE FROM verify_pending WHERE service = 'treehole'`)
	} else {
		_, err = s.db.SQL.ExecContext(ctx, `INSERT INTO verify_pending (service, kind, at) VALUES ('treehole', ?, ?)
			ON CONFLICT (service) DO UPDATE SET kind = excluded.kind, at = excluded.at`, kind, s.now().UnixMilli())
	}
	if err != nil {
		return fmt.Errorf("record the pending check: %w", err)
	}
	return nil
}

// thRequest is one request to Treehole.
type thRequest struct {
	method, target, ctype string
	headers               [][2]string
	body                  []byte
}

func thPost(path string, body map[string]string) *thRequest {
	b, _ := json.Marshal(body)
	return &thRequest{method: "POST", target: path, ctype: "application/json", body: b}
}

// envelope is a Treehole reply (docs/CAMPUS-PROTOCOLS.md §5.1).
type envelope struct {
	code    int
	success bool
	message string
	value   *expr.Object // the whole reply, keys in order
}

// treehole sends r through the campus client and reads the envelope.
func (s *Set) treehole(ctx context.Context, r *thRequest) (*envelope, error) {
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, r.target, body)
	if err != nil {
		return nil, fmt.Errorf("request %s %s: %v", r.method, r.target, err)
	}
	for _, h := range r.headers {
		req.Header.Add(h[0], h[1])
	}
	if r.ctype != "" {
		req.Header.Set("Content-Type", r.ctype)
	}
	resp, err := s.campus.Do(ctx, "treehole", req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, thMaxReply+1))
	if err != nil {
		return nil, fmt.Errorf("treehole %s %s: %v", r.method, r.target, err)
	}
	if len(b) > thMaxReply {
		return nil, fmt.Errorf("treehole %s %s: the reply is over 2 MB", r.method, r.target)
	}
	if resp.StatusCode == http.StatusUnauthorized {
		return nil, errors.New("treehole: the session has expired (HTTP 401): run harness campus login treehole")
	}
	v, err := expr.FromJSON(bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")))
	o, isObj := v.(*expr.Object)
	if err != nil || !isObj {
		return nil, fmt.Errorf("treehole %s %s: the reply (HTTP %d) is not a JSON object", r.method, r.target, resp.StatusCode)
	}
	env := &envelope{value: o}
	if f, ok := get(o, "code").(float64); ok {
		env.code = int(f)
	}
	env.success = get(o, "success") == true
	env.message, _ = get(o, "message").(string)
	return env, nil
}

func get(o *expr.Object, k string) any { v, _ := o.Get(k); return v }

func treeholeFailure(env *envelope) error {
	msg := env.message
	if msg == "" {
		msg = "the reply has no success: true"
	}
	return fmt.Errorf("Treehole: %s (code %d)", msg, env.code)
}

// treeholeRequest reads verify.treehole's request argument: { url, method?
// (GET, POST, PUT, DELETE), query? (object), headers? (object of strings),
// json? | body? (string) | form? (object) }. url is a path on Treehole such
// as /chapi/api/course/score_v2, optionally with a query.
func treeholeRequest(v any) (*thRequest, error) {
	o, ok := v.(*expr.Object)
	if !ok {
		return nil, fmt.Errorf("request must be an object { url, method?, query?, headers?, json? | body? | form? }, not %s", expr.TypeOf(v))
	}
	a := &args{o: o}
	if err := a.only("url", "method", "query", "headers", "json", "body", "form"); err != nil {
		return nil, fmt.Errorf("request: %v", err)
	}
	target, err := a.str("url", true, 4096)
	if err != nil {
		return nil, fmt.Errorf("request: %v", err)
	}
	u, err := url.Parse(target)
	if err != nil || u.Scheme != "" || u.Host != "" || !strings.HasPrefix(u.Path, "/") {
		return nil, fmt.Errorf("request: url must be a path on Treehole starting with / (got %q)", target)
	}
	method, err := a.str("method", false, 8)
	if err != nil {
		return nil, fmt.Errorf("request: %v", err)
	}
	method = strings.ToUpper(method)
	if method == "" {
		method = "GET"
	}
	if !slices.Contains([]string{"GET", "POST", "PUT", "DELETE"}, method) {
		return nil, fmt.Errorf("request: method must be GET, POST, PUT or DELETE, not %q", method)
	}
	r := &thRequest{method: method, target: target}
	if q := a.get("query"); q != nil {
		qo, ok := q.(*expr.Object)
		if !ok {
			return nil, fmt.Errorf("request: query must be an object, not %s", expr.TypeOf(q))
		}
		enc, err := encodeQuery(qo)
		if err != nil {
			return nil, fmt.Errorf("request: query: %v", err)
		}
		if enc != "" {
			if strings.Contains(r.target, "?") {
				r.target += "&" + enc
			} else {
				r.target += "?" + enc
			}
		}
	}
	if h := a.get("headers"); h != nil {
		ho, ok := h.(*expr.Object)
		if !ok {
			return nil, fmt.Errorf("request: headers must be an object, not %s", expr.TypeOf(h))
		}
		for i := 0; i < ho.Len(); i++ {
			k, v := ho.Entry(i)
			sv, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("request: headers.%s must be a string", k)
			}
			r.headers = append(r.headers, [2]string{k, sv})
		}
	}
	n := 0
	for _, k := range []string{"json", "body", "form"} {
		if a.present(k) {
			n++
		}
	}
	if n > 1 {
		return nil, errors.New("request: give one of json, body and form")
	}
	switch {
	case a.present("json"):
		b, err := expr.ToJSON(a.get("json"), "")
		if err != nil {
			return nil, fmt.Errorf("request: json: %v", err)
		}
		r.body, r.ctype = b, "application/json"
	case a.has("body"):
		b, err := a.str("body", true, 0)
		if err != nil {
			return nil, fmt.Errorf("request: %v", err)
		}
		r.body = []byte(b)
	case a.has("form"):
		fo, ok := a.get("form").(*expr.Object)
		if !ok {
			return nil, errors.New("request: form must be an object")
		}
		enc, err := encodeQuery(fo)
		if err != nil {
			return nil, fmt.Errorf("request: form: %v", err)
		}
		r.body, r.ctype = []byte(enc), "application/x-www-form-urlencoded"
	}
	return r, nil
}

// encodeQuery writes an object as k=v pairs in its order, values
// percent-encoded as encodeURIComponent does (docs/DECISIONS.md §10); null
// values are left out.
func encodeQuery(o *expr.Object) (string, error) {
	var parts []string
	for i := 0; i < o.Len(); i++ {
		k, v := o.Entry(i)
		if v == nil {
			continue
		}
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case float64:
			s = expr.FormatNumber(x)
		case bool:
			s = fmt.Sprint(x)
		default:
			return "", fmt.Errorf("%s must be a string, number or boolean, not %s", k, expr.TypeOf(v))
		}
		parts = append(parts, uriComponent(k)+"="+uriComponent(s))
	}
	return strings.Join(parts, "&"), nil
}

func uriComponent(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "+", "%20")
}
