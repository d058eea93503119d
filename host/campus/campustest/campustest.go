// Package campustest runs stand-in servers for IAAA and every campus
// service, following docs/CAMPUS-PROTOCOLS.md (§2 IAAA, §2.5
// portal and card, §5 Treehole, §8 card, §9 ITS) as exactly as the facts
// go: form fields, headers, redirects, cookies, error bodies and token
// formats, including the failure paths (E01 wrong password, E02 activation
// needed, E99 QR expired, an expired session mid-use, Treehole's pending
// SMS check). The real services cannot be reached from the project's
// machines; these are how the sign-in flows are proved (docs/HOST-API.md "Campus sign-in").
//
// Where the facts are thin the stand-in does what the host's adapter
// assumes, and says so: the services behind cookieHop (Blackboard,
// elective, cwfw, cwpay, bdkj, library, library-space) set a JSESSIONID on
// their IAAA redirect and send an expired session to IAAA's oauth.jsp; ITS
// sends an expired session to /cas/webLogin; IAAA's refusal of a wrong
// authenticator code is invented (code E21; §14 item 8 says the real list
// is unknown).
package campustest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/boombuler/barcode"
	"github.com/boombuler/barcode/qr"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
)

// Fake account of the stand-ins (fake names, 2030 dates).
const (
	User       = "2000000000"
	Password   = "Test-Passw0rd!"
	PersonName = "张三"
	SMSCode    = "246810"
	// BindSecret is the authenticator secret genOtpKey.do hands out.
	BindSecret = "JBSWY3DPEHPK3PXPJBSWY3DP"
	// ITSUser2 and ITSPassword2 are a separate campus-network account, for
	// Stand.ITSUser and ITSPassword.
	ITSUser2     = "net2000000000"
	ITSPassword2 = "Net-Passw0rd!"
	// BalanceFen is the card balance queryCard reports: 123.45 yuan.
	BalanceFen = 12345
	// CardAccount is the card account queryCard reports; PayAcc and PayType name the purse
	// codebarPayinfo lists, which batchGetBarCodeGet wants back (§8.2).
	CardAccount = "100000"
	PayAcc      = "000"
	PayType     = "1"
)

// Names are the stand-in servers: IAAA, the portal, and each service.
var Names = []string{"iaaa", "portal", "card", "its", "treehole", "blackboard", "elective", "cwfw", "cwpay", "bdkj", "library", "library-space"}

// cookieApps are the appids and redirect paths the cookie services accept.
var cookieApps = map[string][2]string{
	"blackboard":    {"blackboard", "/webapps/bb-sso-BBLEARN/execute/authValidate/campusLogin"},
	"elective":      {"syllabus", "/elective2008/ssoLogin.do"},
	"cwfw":          {"IIPF", "/WFManager/home2.jsp"},
	"cwpay":         {"cwsf", "/login/iaaa"},
	"bdkj":          {"bdkj", "/login/oauth"},
	"library":       {"lib", "/portal/iaaa/login"},
	"library-space": {"seat", "/login/iaaa"},
}

// Stand is one set of stand-in servers and the state they share. Set the
// exported fields before the flows run; they are read under the lock.
type Stand struct {
	mu sync.Mutex

	// OTPSecret, when set, is the account's bound authenticator: IAAA then
	// wants otpCode to be its current code.
	OTPSecret string
	// NeedsActivation makes IAAA answer E02 to every sign-in.
	NeedsActivation bool
	// TreeholeSMS makes Treehole's probe answer 40002 until the SMS code
	// is verified.
	TreeholeSMS bool
	// QRScanAfter is the poll on which the QR code counts as scanned (1 =
	// the first); 0 never. QRExpireAfter answers E99 from that poll on.
	QRScanAfter, QRExpireAfter int
	// ITSUser and ITSPassword are the campus-network account ITS accepts;
	// empty means the IAAA account's (User, Password).
	ITSUser, ITSPassword string
	// Now is the stand-in's clock; nil means time.Now.
	Now func() time.Time
	// PayCodes records, in order, every payment code batchGetBarCodeGet handed out; each call
	// hands out a new one, as the card app's codes rotate (§8.2).
	PayCodes []string

	servers map[string]*httptest.Server
	key     *rsa.PrivateKey
	tokens  map[string]string          // IAAA token → appid (one use)
	live    map[string]map[string]bool // service → credentials that are valid
	tickets map[string]bool            // portal → card tickets
	portal  map[string]bool            // portal SESSION values
	qr      map[string]int             // JSESSIONID → polls
	bind    map[string]int             // IAAA JSESSIONID → binding step done
	devices map[string]string          // Treehole JWT → the device id it was issued for
	smsSent time.Time                  // when Treehole last texted a login code
	issued  []string
	// Log records every request as "name METHOD path", for tests.
	Log []string
	// Seen records every request's form and headers, for secret scans.
	Seen []string
}

var (
	keyOnce sync.Once
	rsaKey  *rsa.PrivateKey
)

// New starts every stand-in server; Close stops them.
func New() *Stand {
	keyOnce.Do(func() { rsaKey, _ = rsa.GenerateKey(rand.Reader, 2048) })
	s := &Stand{key: rsaKey, servers: map[string]*httptest.Server{}, tokens: map[string]string{},
		live: map[string]map[string]bool{}, tickets: map[string]bool{}, portal: map[string]bool{},
		qr: map[string]int{}, bind: map[string]int{}, devices: map[string]string{}}
	for _, n := range Names {
		n := n
		s.servers[n] = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.mu.Lock()
			defer s.mu.Unlock()
			r.ParseForm()
			s.Log = append(s.Log, n+" "+r.Method+" "+r.URL.Path)
			s.Seen = append(s.Seen, fmt.Sprint(r.URL.RawQuery, r.PostForm, r.Header))
			s.serve(n, w, r)
		}))
	}
	return s
}

// Close stops the servers.
func (s *Stand) Close() {
	for _, srv := range s.servers {
		srv.Close()
	}
}

// URL returns the base URL of the named stand-in.
func (s *Stand) URL(name string) string { return s.servers[name].URL }

// Bases maps every name to its stand-in's base URL (Signer.Bases,
// Client.Bases).
func (s *Stand) Bases() map[string]string {
	out := map[string]string{}
	for n, srv := range s.servers {
		out[n] = srv.URL
	}
	return out
}

// Env is the value of campus.EndpointsEnv that points the CLI at the
// stand-ins.
func (s *Stand) Env() string {
	var parts []string
	for _, n := range Names {
		parts = append(parts, n+"="+s.URL(n))
	}
	return strings.Join(parts, ",")
}

// Expire ends every session of service, as the service would mid-use.
func (s *Stand) Expire(service string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.live[service] = map[string]bool{}
}

// Set runs f under the stand-in's lock, to change its fields safely.
func (s *Stand) Set(f func(s *Stand)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

// Count returns how many logged requests start with prefix ("iaaa POST
// /iaaa/oauthlogin.do").
func (s *Stand) Count(prefix string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, l := range s.Log {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

func (s *Stand) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func rnd(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// rndDigits returns n random decimal digits.
func rndDigits(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	for i := range b {
		b[i] = '0' + b[i]%10
	}
	return string(b)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	json.NewEncoder(w).Encode(v)
}

func (s *Stand) grant(service, cred string) {
	if s.live[service] == nil {
		s.live[service] = map[string]bool{}
	}
	s.live[service][cred] = true
	s.issued = append(s.issued, cred)
}

func (s *Stand) serve(name string, w http.ResponseWriter, r *http.Request) {
	switch name {
	case "iaaa":
		s.iaaa(w, r)
	case "portal":
		s.portalHop(w, r)
	case "card":
		s.card(w, r)
	case "its":
		s.its(w, r)
	case "treehole":
		s.treehole(w, r)
	default:
		s.cookieService(name, w, r)
	}
}

// ---- IAAA ----

func iaaaFail(w http.ResponseWriter, code, msg string) {
	writeJSON(w, map[string]any{"success": false, "errors": map[string]string{"code": code, "msg": msg}})
}

func (s *Stand) otpOK(code string) bool {
	want, _ := totp.GenerateCodeCustom(s.OTPSecret, s.now(), totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	return code == want
}

func (s *Stand) iaaa(w http.ResponseWriter, r *http.Request) {
	xhr := r.Header.Get("X-Requested-With") == "XMLHttpRequest" && strings.HasSuffix(r.Header.Get("Referer"), "/iaaa/oauth.jsp")
	sid := ""
	if c, err := r.Cookie("JSESSIONID"); err == nil {
		sid = c.Value
	}
	newSession := func() string {
		sid = rnd(8)
		http.SetCookie(w, &http.Cookie{Name: "JSESSIONID", Value: sid, Path: "/iaaa", HttpOnly: true})
		return sid
	}
	switch r.URL.Path {
	case "/iaaa/getPublicKey.do":
		if !xhr {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		der, _ := x509.MarshalPKIXPublicKey(&s.key.PublicKey)
		writeJSON(w, map[string]any{"success": true, "key": string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))})
	case "/iaaa/oauthlogin.do":
		if r.Method != http.MethodPost || !xhr {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		for _, f := range []string{"appid", "userName", "password", "randCode", "smsCode", "otpCode", "redirUrl"} {
			if _, ok := r.PostForm[f]; !ok {
				iaaaFail(w, "E00", "缺少参数 "+f)
				return
			}
		}
		ct, err := base64.StdEncoding.DecodeString(r.PostForm.Get("password"))
		var pw []byte
		if err == nil {
			pw, err = rsa.DecryptPKCS1v15(nil, s.key, ct)
		}
		switch {
		case err != nil || r.PostForm.Get("userName") != User || string(pw) != Password:
			iaaaFail(w, "E01", "用户名或密码错误")
		case s.NeedsActivation:
			iaaaFail(w, "E02", "账号未激活")
		case s.OTPSecret != "" && !s.otpOK(r.PostForm.Get("otpCode")):
			iaaaFail(w, "E21", "手机令牌验证码错误")
		default:
			tok := "iaaa-" + rnd(12)
			s.tokens[tok] = r.PostForm.Get("appid") + "|" + r.PostForm.Get("redirUrl")
			writeJSON(w, map[string]any{"success": true, "token": tok})
		}
	case "/iaaa/oauth.jsp":
		newSession()
		s.qr[sid] = 0
		w.Write([]byte("<html><body>IAAA stand-in</body></html>"))
	case "/iaaa/genQRCode.do":
		if _, ok := s.qr[sid]; !ok || !xhr {
			http.Error(w, "no session", http.StatusForbidden)
			return
		}
		code, _ := qr.Encode("https://iaaa.pku.edu.cn/qr/"+sid, qr.M, qr.Auto)
		code, _ = barcode.Scale(code, code.Bounds().Dx()*4, code.Bounds().Dy()*4)
		w.Header().Set("Content-Type", "image/png")
		png.Encode(w, code)
	case "/iaaa/oauthlogin4QRCode.do":
		n, ok := s.qr[sid]
		f := r.PostForm
		if !ok || r.Method != http.MethodPost || f.Get("appId") != "PKUApp" || f.Get("issuerAppId") != "iaaa" || f.Get("targetAppId") == "" || f.Get("redirectUrl") == "" {
			iaaaFail(w, "E00", "参数错误")
			return
		}
		n++
		s.qr[sid] = n
		switch {
		case s.QRExpireAfter > 0 && n >= s.QRExpireAfter:
			iaaaFail(w, "E99", "二维码已失效")
		case s.QRScanAfter > 0 && n >= s.QRScanAfter && s.NeedsActivation:
			iaaaFail(w, "E02", "账号未激活")
		case s.QRScanAfter > 0 && n >= s.QRScanAfter:
			tok := "iaaa-" + rnd(12)
			s.tokens[tok] = f.Get("targetAppId") + "|" + f.Get("redirectUrl")
			writeJSON(w, map[string]any{"success": true, "token": tok})
		default:
			iaaaFail(w, "E10", "无有效绑定")
		}
	case "/iaaa/auth4Bind.do":
		if r.PostForm.Get("userName") != User || r.PostForm.Get("password") != Password {
			writeJSON(w, map[string]any{"success": false, "errors": map[string]string{"msg": "用户名或密码错误"}})
			return
		}
		s.bind[newSession()] = 1
		writeJSON(w, map[string]any{"success": true})
	case "/iaaa/pageFlows/identity/otpBind/sendSMSCodeBind.do":
		if s.bind[sid] < 1 {
			writeJSON(w, map[string]any{"success": false, "errMsg": "会话已失效"})
			return
		}
		s.bind[sid] = 2
		writeJSON(w, map[string]any{"success": true, "mobileMask": "138****0000"})
	case "/iaaa/pageFlows/identity/otpBind/checkSms.do":
		if s.bind[sid] < 2 || r.PostForm.Get("userId") != User {
			writeJSON(w, map[string]any{"success": false, "message": "会话已失效"})
			return
		}
		if r.PostForm.Get("smsCode") != SMSCode {
			writeJSON(w, map[string]any{"success": false, "message": "短信验证码错误"})
			return
		}
		s.bind[sid] = 3
		writeJSON(w, map[string]any{"success": true, "message": "验证成功"})
	case "/iaaa/pageFlows/identity/otpBind/genOtpKey.do":
		if s.bind[sid] < 3 {
			writeJSON(w, map[string]any{"success": false, "errMsg": "请先验证短信"})
			return
		}
		s.bind[sid] = 4
		writeJSON(w, map[string]any{"success": true, "personId": User, "personName": PersonName, "secKey": BindSecret})
	case "/iaaa/pageFlows/identity/otpBind/userBind.do":
		saved := s.OTPSecret
		s.OTPSecret = BindSecret
		if s.bind[sid] < 4 || r.PostForm.Get("userId") != User || !s.otpOK(r.PostForm.Get("otpCode")) {
			s.OTPSecret = saved
			writeJSON(w, map[string]any{"success": false, "errMsg": "令牌验证码错误"})
			return
		}
		delete(s.bind, sid)
		writeJSON(w, map[string]any{"success": true})
	default:
		http.NotFound(w, r)
	}
}

// takeToken redeems a one-time IAAA token issued for appid, whose
// redirect starts with redirectPrefix.
func (s *Stand) takeToken(tok, appid, redirectPrefix string) bool {
	v, ok := s.tokens[tok]
	delete(s.tokens, tok)
	app, redir, _ := strings.Cut(v, "|")
	return ok && app == appid && strings.HasPrefix(redir, redirectPrefix)
}

// ---- Portal and card (§2.5, §8) ----

func (s *Stand) mobile(r *http.Request) bool {
	return strings.HasPrefix(r.Header.Get("User-Agent"), "PKUANDROID") && r.Header.Get("X-Requested-With") == "cn.edu.pku.PKUAndroid"
}

func (s *Stand) portalHop(w http.ResponseWriter, r *http.Request) {
	if !s.mobile(r) {
		http.Error(w, "mobile client only", http.StatusForbidden)
		return
	}
	switch r.URL.Path {
	case "/portal2017/ssoLogin.do":
		if r.URL.Query().Get("_rand") == "" || !s.takeToken(r.URL.Query().Get("token"), "portal2017", s.URL("portal")+"/portal2017/ssoLogin.do") {
			http.Redirect(w, r, s.URL("iaaa")+"/iaaa/oauth.jsp", http.StatusFound)
			return
		}
		sid := rnd(8)
		s.portal[sid] = true
		http.SetCookie(w, &http.Cookie{Name: "SESSION", Value: sid, Path: "/portal2017", HttpOnly: true})
		http.Redirect(w, r, "/portal2017/", http.StatusFound)
	case "/portal2017/util/redirectToCard.do":
		c, err := r.Cookie("SESSION")
		if err != nil || !s.portal[c.Value] {
			http.Redirect(w, r, "/portal2017/", http.StatusFound)
			return
		}
		t := "ST-" + rnd(8)
		s.tickets[t] = true
		http.Redirect(w, r, s.URL("card")+"/berserker-auth/cas/login/pku?token="+t+"&targetUrl="+url.QueryEscape(s.URL("card")+"/plat/"), http.StatusFound)
	default:
		http.NotFound(w, r)
	}
}

// fakeJWT is a JWT-shaped token with an exp claim; the signature is random
// bytes (nobody but the stand-in checks it).
func fakeJWT(sub string, exp time.Time) string {
	enc := base64.RawURLEncoding
	h := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	p := enc.EncodeToString([]byte(fmt.Sprintf(`{"sub":%q,"exp":%d}`, sub, exp.Unix())))
	return h + "." + p + "." + enc.EncodeToString([]byte(rnd(16)))
}

func (s *Stand) card(w http.ResponseWriter, r *http.Request) {
	if !s.mobile(r) {
		http.Error(w, "mobile client only", http.StatusForbidden)
		return
	}
	if r.URL.Path == "/berserker-auth/cas/login/pku" {
		t := r.URL.Query().Get("token")
		if !s.tickets[t] || r.URL.Query().Get("targetUrl") == "" {
			http.Error(w, "bad ticket", http.StatusBadRequest)
			return
		}
		delete(s.tickets, t)
		jwt := fakeJWT(User, s.now().Add(24*time.Hour))
		s.grant("card", jwt)
		http.Redirect(w, r, r.URL.Query().Get("targetUrl")+"?synjones-auth="+jwt, http.StatusFound)
		return
	}
	auth := r.Header.Get("Synjones-Auth")
	if !strings.HasPrefix(auth, "bearer ") || !s.live["card"][strings.TrimPrefix(auth, "bearer ")] {
		// §8.1: an expired session is code 401 with the text in message.
		writeJSON(w, map[string]any{"code": 401, "success": false, "message": "登录已过期，请重新登录", "data": nil})
		return
	}
	if r.Header.Get("Synaccesssource") != "h5" || (r.Method == http.MethodGet && r.URL.Query().Get("synAccessSource") != "h5") {
		writeJSON(w, map[string]any{"code": 400, "success": false, "msg": "缺少 synAccessSource"})
		return
	}
	ok := func(data any) {
		writeJSON(w, map[string]any{"code": 200, "success": true, "msg": "操作成功", "data": data})
	}
	switch r.URL.Path {
	case "/berserker-app/ykt/tsm/queryCard":
		ok(map[string]any{"card": []any{map[string]any{
			"sno": User, "name": PersonName, "account": CardAccount, "cardname": "学生卡",
			"lostflag": 0, "freezeflag": 0, "expdate": "20340701", "elec_accamt": BalanceFen,
			"accinfo": []any{map[string]any{"balance": BalanceFen, "name": "电子账户", "type": "000", "daycostamt": 1500, "daycostlimit": 30000}},
		}}})
	case "/berserker-search/search/personal/turnover":
		ok(map[string]any{"records": []any{
			map[string]any{"resume": "示例食堂", "turnoverType": "消费", "tranamt": 1250, "cardBalance": BalanceFen, "effectdateStr": "2030-03-04 12:01:02", "icon": "consume"},
			map[string]any{"resume": "银行卡充值", "turnoverType": "充值", "tranamt": 10000, "cardBalance": 13595, "effectdateStr": "2030-03-04 08:00:00", "icon": "recharge"},
		}, "total": 2, "current": 1, "pages": 1})
	case "/berserker-search/statistics/turnover/count":
		ok(map[string]any{"income": 10000, "expenses": 1250})
	case "/berserker-app/ykt/tsm/codebarPayinfo":
		ok([]any{map[string]any{"name": "电子账户", "elec_accamt": BalanceFen, "payacc": PayAcc, "paytype": PayType}})
	case "/berserker-app/ykt/tsm/batchGetBarCodeGet":
		q := r.URL.Query()
		if q.Get("account") != CardAccount || q.Get("payacc") != PayAcc || q.Get("paytype") != PayType {
			writeJSON(w, map[string]any{"code": 500, "success": false, "msg": "账户信息有误"})
			return
		}
		code := fmt.Sprintf("28%04d%s", len(s.PayCodes)+1, rndDigits(12))
		s.PayCodes = append(s.PayCodes, code)
		ok(map[string]any{"barcode": []string{code}})
	default:
		http.NotFound(w, r)
	}
}

// ---- ITS (§9) ----

func (s *Stand) its(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html;charset=UTF-8")
	switch r.URL.Path {
	case "/cas/webLogin":
		f := r.PostForm
		if r.Method != http.MethodPost || f.Get("iprange") != "yes" || !strings.HasPrefix(r.Header.Get("Referer"), "https://its.pku.edu.cn/") {
			w.Write([]byte(`<html><body><form action="/cas/webLogin"></form></body></html>`))
			return
		}
		wantUser, wantPw := User, Password
		if s.ITSUser != "" {
			wantUser, wantPw = s.ITSUser, s.ITSPassword
		}
		if f.Get("username") != wantUser || f.Get("password") != wantPw {
			w.Write([]byte(`<html><script>alert("账号或密码错误");history.go(-1);</script></html>`))
			return
		}
		sid := rnd(8)
		s.grant("its", sid)
		http.SetCookie(w, &http.Cookie{Name: "JSESSIONID", Value: sid, Path: "/", HttpOnly: true})
		w.Write([]byte(`<html><body><div>账户余额：12.34 元</div><script>alert("欢迎");</script></body></html>`))
	default:
		c, err := r.Cookie("JSESSIONID")
		if err != nil || !s.live["its"][c.Value] {
			http.Redirect(w, r, "/cas/webLogin", http.StatusFound)
			return
		}
		if r.URL.Path == "/netportal/itsUtil" && r.URL.Query().Get("operation") == "info" {
			w.Write([]byte(`<table class="itsutil_account"><tr><td class="td_name">账　　号</td><td class="td_value">` + User +
				`</td></tr><tr><td class="td_name">余　　额</td><td class="td_value">12.34元</td></tr><tr><td class="td_name">本月使用</td><td class="td_value">20.5G</td></tr>` +
				`<tr><td class="td_name">本月费用</td><td class="td_value">10元</td></tr></table>`))
			return
		}
		http.NotFound(w, r)
	}
}

// ---- Treehole (§5) ----

func (s *Stand) treehole(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if r.URL.Path == "/chapi/cas_iaaa_login" {
		uuid := q.Get("uuid")
		if q.Get("version") != "3" || q.Get("plat") != "web" || len(uuid) != 12 || q.Get("_rand") == "" ||
			!s.takeToken(q.Get("token"), "PKU Helper", s.URL("treehole")+"/chapi/cas_iaaa_login?version=3&uuid="+uuid+"&plat=web") {
			http.Error(w, "bad token", http.StatusBadRequest)
			return
		}
		exp := s.now().Add(7 * 24 * time.Hour).Unix()
		jwt := fakeJWT(User, time.Unix(exp, 0))
		s.grant("treehole", jwt)
		s.devices[jwt] = uuid
		for _, c := range []*http.Cookie{{Name: "pku_token", Value: jwt}, {Name: "pku_expires_in", Value: strconv.FormatInt(exp, 10)},
			{Name: "pku_uid", Value: User}, {Name: "XSRF-TOKEN", Value: rnd(8)}, {Name: "_session", Value: rnd(8)}} {
			c.Path = "/"
			http.SetCookie(w, c)
		}
		http.Redirect(w, r, "/ch/web/iaaa_success?is_mobile=0&token="+jwt+"&expires_in="+strconv.FormatInt(exp, 10)+"&uid="+User, http.StatusFound)
		return
	}
	// §5.1: Bearer JWT, and the uuid header whose 12-hex tail is the device id of the IAAA
	// redirect the JWT was issued through.
	auth := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	uuid := r.Header.Get("Uuid")
	if !s.live["treehole"][auth] || !strings.HasPrefix(uuid, "Web_PKUHOLE_2.0.0_WEB_UUID_") ||
		len(uuid) != len("Web_PKUHOLE_2.0.0_WEB_UUID_")+23+1+12 || !strings.HasSuffix(uuid, "-"+s.devices[auth]) {
		w.WriteHeader(http.StatusUnauthorized)
		writeJSON(w, map[string]any{"code": 40100, "success": false, "message": "登录已失效"})
		return
	}
	env := func(code int, msg string, data any) {
		writeJSON(w, map[string]any{"code": code, "success": code == 20000, "message": msg, "timestamp": s.now().Unix(), "data": data})
	}
	var body map[string]string
	if r.Method == http.MethodPost {
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &body)
	}
	switch r.URL.Path {
	case "/chapi/version":
		env(20000, "success", map[string]any{"version": "2.0.0"})
	case "/chapi/api/jwt_send_msg":
		// §5.3: a second send while the first code is valid answers success false with 未过期.
		if !s.smsSent.IsZero() && s.now().Sub(s.smsSent) < time.Minute {
			env(40004, "验证码还未过期", nil)
			return
		}
		s.smsSent = s.now()
		env(20000, "发送成功", map[string]any{})
	case "/chapi/api/jwt_msg_verify":
		if body["valid_code"] != SMSCode {
			env(40003, "验证码错误", nil)
			return
		}
		s.TreeholeSMS = false
		env(20000, "验证成功", nil)
	default:
		if s.TreeholeSMS {
			env(40002, "请先完成短信验证", nil)
			return
		}
		switch r.URL.Path {
		case "/chapi/api/v3/hole/list_comments", "/chapi/api/v3/hole/list":
			kw := q.Get("keyword")
			var list []any
			for _, p := range treeholePosts {
				if kw == "" || strings.Contains(p["text"].(string), kw) {
					list = append(list, p)
				}
			}
			env(20000, "success", map[string]any{"list": list, "total": len(list)})
		case "/chapi/api/v3/hole/one":
			env(20000, "success", treeholePosts[0])
		case "/chapi/api/v3/comment/list":
			env(20000, "success", map[string]any{"list": []any{map[string]any{"cid": 9001, "pid": q.Get("pid"), "text": "虚构的回复", "name": "Alice", "timestamp": 1898812900}}})
		default:
			env(20000, "success", nil)
		}
	}
}

var treeholePosts = []map[string]any{
	{"pid": 7000001, "text": "虚构的树洞：图书馆今天人多吗？", "timestamp": 1898812800, "reply": 1, "likenum": 3},
	{"pid": 7000002, "text": "虚构的树洞：食堂新菜不错", "timestamp": 1898812700, "reply": 0, "likenum": 1},
}

// ---- The cookie services ----

func (s *Stand) cookieService(name string, w http.ResponseWriter, r *http.Request) {
	app := cookieApps[name]
	if r.URL.Path == app[1] && r.URL.Query().Get("token") != "" {
		if r.URL.Query().Get("_rand") == "" || !s.takeToken(r.URL.Query().Get("token"), app[0], s.URL(name)+app[1]) {
			http.Error(w, "bad token", http.StatusUnauthorized)
			return
		}
		sid := rnd(8)
		s.grant(name, sid)
		http.SetCookie(w, &http.Cookie{Name: "JSESSIONID", Value: sid, Path: "/", HttpOnly: true})
		http.Redirect(w, r, "/", http.StatusFound)
		return
	}
	c, err := r.Cookie("JSESSIONID")
	if err != nil || !s.live[name][c.Value] {
		http.Redirect(w, r, s.URL("iaaa")+"/iaaa/oauth.jsp?appID="+url.QueryEscape(app[0]), http.StatusFound)
		return
	}
	writeJSON(w, map[string]any{"service": name, "ok": true})
}

// Issued lists every session credential the stand-ins handed out (JWTs,
// session cookie values), sorted, for secret scans.
func (s *Stand) Issued() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := append([]string(nil), s.issued...)
	sort.Strings(out)
	return out
}
