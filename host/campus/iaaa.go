package campus

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"time"
)

// IAAABase is the scheme and host of PKU's central sign-in; its endpoints
// are under /iaaa (docs/CAMPUS-PROTOCOLS.md §2.1).
const IAAABase = "https://iaaa.pku.edu.cn"

// App is an IAAA application: the appid a service signs in with and the
// redirect URL IAAA issues the token for (docs/CAMPUS-PROTOCOLS.md §2.1).
type App struct {
	ID       string
	Redirect string
}

// IAAA is a client of PKU's central sign-in (docs/CAMPUS-PROTOCOLS.md §2.2–§2.4).
// Each sign-in, QR sign-in or binding uses its own cookie jar and never
// follows redirects.
type IAAA struct {
	// Base is the scheme and host, IAAABase when empty.
	Base string
	// Transport sends the requests; nil means the HTTP/1.1 transport the
	// campus client uses.
	Transport http.RoundTripper
}

func (c *IAAA) base() string {
	if c.Base != "" {
		return strings.TrimRight(c.Base, "/")
	}
	return IAAABase
}

// newHTTP returns an http.Client with a fresh cookie jar that does not
// follow redirects.
func newHTTP(rt http.RoundTripper) *http.Client {
	if rt == nil {
		rt = http1Transport
	}
	jar, _ := cookiejar.New(nil)
	return &http.Client{Transport: rt, Jar: jar, Timeout: 20 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// IAAAError is a refusal from IAAA: its error code and message
// (docs/CAMPUS-PROTOCOLS.md §2.2, §2.3). Error gives the English text; Message
// gives it in a language.
type IAAAError struct {
	// Code is IAAA's code, e.g. "E01"; "" when IAAA gave none.
	Code string
	// Msg is IAAA's own message (Chinese), possibly empty.
	Msg string
}

// iaaaMessages maps the IAAA codes pkucli knows (docs/CAMPUS-PROTOCOLS.md §2.2,
// §2.3, §14 item 8) to messages in zh-Hans and en.
var iaaaMessages = map[string][2]string{
	"E01": {"用户名或密码错误", "wrong user name or password"},
	"E02": {"账号需要激活：请先在 iaaa.pku.edu.cn 激活账号", "the account needs activation: activate it at iaaa.pku.edu.cn first"},
	"E10": {"二维码尚未被扫描", "the QR code has not been scanned yet"},
	"E99": {"二维码已过期：请重新开始扫码登录", "the QR code has expired: start the QR sign-in again"},
}

// Message returns the error for people in lang ("zh", "zh-Hans", … for
// Chinese; anything else for English): a known code's message, else IAAA's
// own message with its code.
func (e *IAAAError) Message(lang string) string {
	zh := strings.HasPrefix(strings.ToLower(lang), "zh")
	if m, ok := iaaaMessages[e.Code]; ok {
		if zh {
			return "IAAA：" + m[0]
		}
		return "IAAA: " + m[1]
	}
	msg := e.Msg
	if msg == "" {
		msg = map[bool]string{true: "登录失败", false: "sign-in refused"}[zh]
	}
	if e.Code != "" {
		msg += " (" + e.Code + ")"
	}
	if zh {
		return "IAAA：" + msg
	}
	return "IAAA: " + msg
}

// Error implements error with the English message.
func (e *IAAAError) Error() string { return e.Message("en") }

// iaaaReply is the JSON of oauthlogin.do and oauthlogin4QRCode.do.
type iaaaReply struct {
	Success bool   `json:"success"`
	Token   string `json:"token"`
	Errors  struct {
		Code string `json:"code"`
		Msg  string `json:"msg"`
	} `json:"errors"`
}

func (c *IAAA) xhr(req *http.Request) {
	req.Header.Set("X-Requested-With", "XMLHttpRequest")
	req.Header.Set("Referer", c.base()+"/iaaa/oauth.jsp")
	req.Header.Set("User-Agent", uaDesktop147)
}

// getJSON sends req and decodes a JSON reply of at most 1 MiB into v. A
// non-2xx status is an error naming the step.
func getJSON(hc *http.Client, req *http.Request, step string, v any) error {
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", step, redactURL(err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("%s: %w", step, err)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: HTTP %d", step, resp.StatusCode)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: the reply is not the expected JSON: %w", step, err)
	}
	return nil
}

func form(ctx context.Context, u string, vals url.Values) *http.Request {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(vals.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=UTF-8")
	return req
}

// EncryptPassword encrypts password with IAAA's public key (PEM, PKIX or
// PKCS#1, with or without the PEM armour), RSA PKCS#1 v1.5, and returns it
// in standard Base64 (docs/CAMPUS-PROTOCOLS.md §2.2 step 2).
func EncryptPassword(pemKey, password string) (string, error) {
	pub, err := parseRSAKey(pemKey)
	if err != nil {
		return "", err
	}
	ct, err := rsa.EncryptPKCS1v15(rand.Reader, pub, []byte(password))
	if err != nil {
		return "", fmt.Errorf("IAAA public key: %w", err)
	}
	return base64.StdEncoding.EncodeToString(ct), nil
}

func parseRSAKey(text string) (*rsa.PublicKey, error) {
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, "-----") {
		text = "-----BEGIN PUBLIC KEY-----\n" + text + "\n-----END PUBLIC KEY-----"
	}
	blk, _ := pem.Decode([]byte(text))
	if blk == nil {
		return nil, errors.New("IAAA public key: not PEM")
	}
	if k, err := x509.ParsePKIXPublicKey(blk.Bytes); err == nil {
		if rk, ok := k.(*rsa.PublicKey); ok {
			return rk, nil
		}
		return nil, errors.New("IAAA public key: not an RSA key")
	}
	if rk, err := x509.ParsePKCS1PublicKey(blk.Bytes); err == nil {
		return rk, nil
	}
	return nil, errors.New("IAAA public key: neither PKIX nor PKCS#1")
}

// Password signs in to IAAA for app with a user name and password
// (docs/CAMPUS-PROTOCOLS.md §2.2): getPublicKey.do, the password encrypted with RSA
// PKCS#1 v1.5, then oauthlogin.do with otpCode (the current authenticator
// code, or "") and empty randCode and smsCode. It returns the one-time
// IAAA token, or *IAAAError when IAAA refuses.
func (c *IAAA) Password(ctx context.Context, app App, user, password, otpCode string) (string, error) {
	hc := newHTTP(c.Transport)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.base()+"/iaaa/getPublicKey.do", nil)
	c.xhr(req)
	var key struct {
		Success bool   `json:"success"`
		Key     string `json:"key"`
	}
	if err := getJSON(hc, req, "IAAA getPublicKey.do", &key); err != nil {
		return "", err
	}
	if !key.Success || key.Key == "" {
		return "", errors.New("IAAA getPublicKey.do: no key in the reply")
	}
	enc, err := EncryptPassword(key.Key, password)
	if err != nil {
		return "", err
	}
	req = form(ctx, c.base()+"/iaaa/oauthlogin.do", url.Values{
		"appid": {app.ID}, "userName": {user}, "password": {enc},
		"randCode": {""}, "smsCode": {""}, "otpCode": {otpCode}, "redirUrl": {app.Redirect},
	})
	c.xhr(req)
	var r iaaaReply
	if err := getJSON(hc, req, "IAAA oauthlogin.do", &r); err != nil {
		return "", err
	}
	if !r.Success || r.Token == "" {
		return "", &IAAAError{Code: r.Errors.Code, Msg: r.Errors.Msg}
	}
	return r.Token, nil
}

// QRLogin is a QR sign-in under way (docs/CAMPUS-PROTOCOLS.md §2.3): Image is the
// QR code IAAA drew, to be scanned with the 北京大学 app; Poll waits for the
// scan.
type QRLogin struct {
	// Image is the QR code as IAAA sent it; ContentType its media type.
	Image       []byte
	ContentType string
	app         App
	hc          *http.Client
	iaaa        *IAAA
}

// QR polling schedule (docs/CAMPUS-PROTOCOLS.md §2.3 step 3): every 3 s plus up to
// 0.5 s of jitter, at most 60 times.
const (
	QRInterval = 3 * time.Second
	QRJitter   = 500 * time.Millisecond
	QRPolls    = 60
)

// StartQR begins a QR sign-in for app: oauth.jsp for the JSESSIONID, then
// genQRCode.do for the image (docs/CAMPUS-PROTOCOLS.md §2.3 steps 1–2).
func (c *IAAA) StartQR(ctx context.Context, app App) (*QRLogin, error) {
	hc := newHTTP(c.Transport)
	u := c.base() + "/iaaa/oauth.jsp?appID=" + strings.ReplaceAll(app.ID, " ", "%20") +
		"&appName=&redirectUrl=" + strings.ReplaceAll(app.Redirect, " ", "%20")
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	req.Header.Set("User-Agent", uaDesktop147)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("IAAA oauth.jsp: %w", err)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("IAAA oauth.jsp: HTTP %d", resp.StatusCode)
	}
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, c.base()+"/iaaa/genQRCode.do?userName=&_rand="+randFloat()+"&appId="+url.QueryEscape(app.ID), nil)
	c.xhr(req)
	resp, err = hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("IAAA genQRCode.do: %w", err)
	}
	defer resp.Body.Close()
	img, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, fmt.Errorf("IAAA genQRCode.do: %w", err)
	}
	if resp.StatusCode/100 != 2 || len(img) == 0 {
		return nil, fmt.Errorf("IAAA genQRCode.do: HTTP %d, %d bytes", resp.StatusCode, len(img))
	}
	return &QRLogin{Image: img, ContentType: resp.Header.Get("Content-Type"), app: app, hc: hc, iaaa: c}, nil
}

// PollOnce asks IAAA once whether the code was scanned
// (oauthlogin4QRCode.do). done is true with the token on success; false
// with a nil error while not scanned yet (E10) or on a code pkucli keeps
// polling through; an *IAAAError for E99 (expired) and E02 (activation
// needed), which end the sign-in.
func (q *QRLogin) PollOnce(ctx context.Context) (token string, done bool, err error) {
	req := form(ctx, q.iaaa.base()+"/iaaa/oauthlogin4QRCode.do", url.Values{
		"appId": {"PKUApp"}, "issuerAppId": {"iaaa"}, "targetAppId": {q.app.ID}, "redirectUrl": {q.app.Redirect},
	})
	q.iaaa.xhr(req)
	var r iaaaReply
	if err := getJSON(q.hc, req, "IAAA oauthlogin4QRCode.do", &r); err != nil {
		return "", false, err
	}
	if r.Success && r.Token != "" {
		return r.Token, true, nil
	}
	switch r.Errors.Code {
	case "E99", "E02":
		return "", false, &IAAAError{Code: r.Errors.Code, Msg: r.Errors.Msg}
	}
	return "", false, nil
}

// Poll polls by the documented schedule (QRInterval plus up to QRJitter,
// at most QRPolls times) until the code is scanned, IAAA ends the sign-in,
// or ctx ends. sleep waits between polls; nil means a timer. After the last
// poll it fails with E99's message.
func (q *QRLogin) Poll(ctx context.Context, sleep func(context.Context, time.Duration) error) (string, error) {
	if sleep == nil {
		sleep = sleepCtx
	}
	for i := 0; i < QRPolls; i++ {
		if i > 0 {
			j, _ := rand.Int(rand.Reader, big.NewInt(int64(QRJitter)))
			if err := sleep(ctx, QRInterval+time.Duration(j.Int64())); err != nil {
				return "", err
			}
		}
		tok, done, err := q.PollOnce(ctx)
		if err != nil {
			return "", err
		}
		if done {
			return tok, nil
		}
	}
	return "", &IAAAError{Code: "E99"}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// randFloat is a _rand value like a browser's Math.random().
func randFloat() string {
	n, _ := rand.Int(rand.Reader, big.NewInt(1e15))
	return fmt.Sprintf("0.%015d", n.Int64())
}

// BindState is an authenticator binding between its SMS step and the rest
// (docs/CAMPUS-PROTOCOLS.md §2.4 "How the secret is obtained", split as pkucli
// splits it): the user id and the cookie jar of steps 1–2. It holds IAAA
// session cookies, so it is kept sealed (Accounts.SavePending).
type BindState struct {
	User       string            `json:"user"`
	MobileMask string            `json:"mobileMask"`
	Cookies    map[string]string `json:"cookies"`
	At         time.Time         `json:"at"`
}

type bindReply struct {
	Success    bool   `json:"success"`
	MobileMask string `json:"mobileMask"`
	ErrMsg     string `json:"errMsg"`
	Message    string `json:"message"`
	PersonID   string `json:"personId"`
	PersonName string `json:"personName"`
	SecKey     string `json:"secKey"`
	Errors     struct {
		Msg string `json:"msg"`
	} `json:"errors"`
}

func (r *bindReply) fail(step string) error {
	msg := r.ErrMsg
	if msg == "" {
		msg = r.Message
	}
	if msg == "" {
		msg = r.Errors.Msg
	}
	if msg == "" {
		msg = "refused"
	}
	return fmt.Errorf("IAAA authenticator binding, %s: %s", step, msg)
}

// BindStart runs binding steps 1–2: auth4Bind.do with the plain password,
// then sendSMSCodeBind.do, which texts a code to the phone whose mask it
// returns. The state carries the jar to BindFinish, which may run in
// another process.
func (c *IAAA) BindStart(ctx context.Context, user, password string, now time.Time) (*BindState, error) {
	hc := newHTTP(c.Transport)
	req := form(ctx, c.base()+"/iaaa/auth4Bind.do", url.Values{"userName": {user}, "password": {password}, "randCode": {""}})
	c.xhr(req)
	var r bindReply
	if err := getJSON(hc, req, "IAAA auth4Bind.do", &r); err != nil {
		return nil, err
	}
	if !r.Success {
		return nil, r.fail("sign-in")
	}
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, c.base()+"/iaaa/pageFlows/identity/otpBind/sendSMSCodeBind.do?_rand="+randFloat(), nil)
	c.xhr(req)
	r = bindReply{}
	if err := getJSON(hc, req, "IAAA sendSMSCodeBind.do", &r); err != nil {
		return nil, err
	}
	if !r.Success {
		return nil, r.fail("sending the SMS")
	}
	st := &BindState{User: user, MobileMask: r.MobileMask, Cookies: map[string]string{}, At: now.UTC()}
	u, _ := url.Parse(c.base() + "/iaaa/")
	for _, ck := range hc.Jar.Cookies(u) {
		st.Cookies[ck.Name] = ck.Value
	}
	return st, nil
}

// BindFinish runs binding steps 3–5 with the SMS code: checkSms.do,
// genOtpKey.do (the Base32 secret), userBind.do with the secret's current
// code (totp, e.g. abilities.Code). It returns the secret, for the caller
// to store sealed.
func (c *IAAA) BindFinish(ctx context.Context, st *BindState, smsCode string, totp func(secret string) (string, error)) (string, error) {
	hc := newHTTP(c.Transport)
	u, _ := url.Parse(c.base() + "/iaaa/")
	var cks []*http.Cookie
	for n, v := range st.Cookies {
		cks = append(cks, &http.Cookie{Name: n, Value: v, Path: "/iaaa"})
	}
	hc.Jar.SetCookies(u, cks)
	req := form(ctx, c.base()+"/iaaa/pageFlows/identity/otpBind/checkSms.do", url.Values{"userId": {st.User}, "smsCode": {smsCode}})
	c.xhr(req)
	var r bindReply
	if err := getJSON(hc, req, "IAAA checkSms.do", &r); err != nil {
		return "", err
	}
	if !r.Success {
		return "", r.fail("checking the SMS code")
	}
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, c.base()+"/iaaa/pageFlows/identity/otpBind/genOtpKey.do?_rand="+randFloat(), nil)
	c.xhr(req)
	r = bindReply{}
	if err := getJSON(hc, req, "IAAA genOtpKey.do", &r); err != nil {
		return "", err
	}
	if !r.Success || r.SecKey == "" {
		return "", r.fail("making the key")
	}
	secret, person := r.SecKey, r.PersonID
	code, err := totp(secret)
	if err != nil {
		return "", fmt.Errorf("IAAA authenticator binding: the key IAAA gave is unusable: %w", err)
	}
	req = form(ctx, c.base()+"/iaaa/pageFlows/identity/otpBind/userBind.do", url.Values{"userId": {person}, "otpCode": {code}})
	c.xhr(req)
	r = bindReply{}
	if err := getJSON(hc, req, "IAAA userBind.do", &r); err != nil {
		return "", err
	}
	if !r.Success {
		return "", r.fail("binding")
	}
	return secret, nil
}
