package campus

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"
)

// Hop is one service's sign-in after (or, for ITS, instead of) IAAA
// (every service has a hop; docs/CAMPUS-PROTOCOLS.md §2.5). Every service
// has exactly one Hop (Hops), and the Signer drives them all the same way.
type Hop interface {
	// Service is the campus service name, e.g. "card".
	Service() string
	// App is the IAAA application the hop needs a token for, with the
	// redirect built for prev (Treehole puts its device id in it); ok is
	// false for a service that does not sign in through IAAA (ITS).
	App(in *HopInput) (app App, ok bool)
	// Exchange turns what sign-in produced (the IAAA token, or for ITS the
	// account itself) into a session, with in.HTTP: one cookie jar for this
	// sign-in, redirects not followed.
	Exchange(ctx context.Context, in *HopInput) (*Session, error)
}

// HopInput is what a Hop works with during one sign-in.
type HopInput struct {
	// HTTP is this sign-in's client: its own cookie jar, no redirects.
	HTTP *http.Client
	// Base returns the scheme and host of a service or of "iaaa" and
	// "portal" (defaults, or a stand-in's when configured).
	Base func(name string) string
	// Token is the IAAA token (empty for ITS).
	Token string
	// User and Password are the account's (ITS signs in with them).
	User, Password string
	// Prev is the earlier session of the service, or nil; Device is the
	// device id to use (kept from Prev).
	Prev   *Session
	Device string
	// Now is the sign-in time.
	Now time.Time
	// SMS asks the person for a code Treehole texted them (the login SMS
	// check, docs/CAMPUS-PROTOCOLS.md §5.4); nil when nobody can answer now, and the
	// check is left pending (HopResult.Pending).
	SMS func(ctx context.Context, service, message string) (string, error)
	// Pending is set by a hop that left a check for later, e.g. "sms".
	Pending string
}

// Hops are the adapters, one per campus service, in Services' order.
var Hops = []Hop{
	cardHop{},
	itsHop{},
	treeholeHop{},
	&cookieHop{service: "blackboard", appID: "blackboard", path: "/webapps/bb-sso-BBLEARN/execute/authValidate/campusLogin",
		facts: "appid from docs/CAMPUS-PROTOCOLS.md §2.1; the redirect path is assumed (§2.1 says only that it is a constant in pkucli)"},
	&cookieHop{service: "elective", appID: "syllabus", path: "/elective2008/ssoLogin.do",
		redirect: "http://elective.pku.edu.cn:80/elective2008/ssoLogin.do",
		facts:    "appid and redirect from docs/CAMPUS-PROTOCOLS.md §2.1 (appid syllabus, §13 item 5); the exchange (cookies set by the redirect) is assumed"},
	&cookieHop{service: "cwfw", appID: "IIPF", path: "/WFManager/home2.jsp",
		facts: "appid and redirect from docs/CAMPUS-PROTOCOLS.md §2.1; the exchange is assumed"},
	&cookieHop{service: "cwpay", appID: "cwsf", path: "/login/iaaa",
		facts: "assumed: docs/CAMPUS-PROTOCOLS.md has no appid or redirect for cwpay"},
	&cookieHop{service: "bdkj", appID: "bdkj", path: "/login/oauth",
		redirect: "http://bdkj.pku.edu.cn/login/oauth",
		facts:    "appid and redirect from docs/CAMPUS-PROTOCOLS.md §2.1; the exchange is assumed"},
	&cookieHop{service: "library", appID: "lib", path: "/portal/iaaa/login",
		facts: "assumed: docs/CAMPUS-PROTOCOLS.md has no library facts"},
	&cookieHop{service: "library-space", appID: "seat", path: "/login/iaaa",
		facts: "assumed: docs/CAMPUS-PROTOCOLS.md has no library-space facts"},
}

// signInStep says whether a request to service for u is one of the
// service's own sign-in steps (its hop's exchange, or ITS's account forms),
// which only the host sends (docs/CAMPUS-PROTOCOLS.md §2: plugins never sign in).
// A plugin that sent one, say with an IAAA token of another account, would
// put that account's session in the person's stored one, since cookies a
// reply sets are kept. Paths are compared as servers route them: cleaned,
// without ;parameters, in any case.
func signInStep(service string, u *url.URL) bool {
	segs := strings.Split(u.Path, "/")
	for i, sg := range segs {
		if j := strings.IndexByte(sg, ';'); j >= 0 {
			segs[i] = sg[:j]
		}
	}
	p := strings.ToLower(path.Clean("/" + strings.Join(segs, "/")))
	switch service {
	case "treehole":
		return p == "/chapi/cas_iaaa_login"
	case "card":
		return strings.HasPrefix(p, "/berserker-auth/")
	case "its":
		return p == "/cas/weblogin" || p == "/cas/itsweb"
	}
	h, ok := HopFor(service).(*cookieHop)
	if !ok || p != strings.ToLower(h.path) {
		return false
	}
	for k := range u.Query() {
		if strings.EqualFold(k, "token") {
			return true
		}
	}
	return false
}

// HopFor returns the Hop of service, or nil.
func HopFor(service string) Hop {
	for _, h := range Hops {
		if h.Service() == service {
			return h
		}
	}
	return nil
}

func get(ctx context.Context, hc *http.Client, u string, hdr map[string]string) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, nil, err
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, nil, redactURL(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 2<<20))
	return resp, b, err
}

// redactURL drops the query of the URL net/http quotes in a transport
// error: on a hop it carries the IAAA token or a card ticket, which must not
// reach a log or an answer.
func redactURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil && u.RawQuery != "" {
			u.RawQuery = "[redacted]"
			return &url.Error{Op: ue.Op, URL: u.String(), Err: ue.Err}
		}
	}
	return err
}

// jarCookies returns the jar's cookies for base as a map.
func jarCookies(hc *http.Client, base string) map[string]string {
	u, err := url.Parse(base + "/")
	if err != nil || hc.Jar == nil {
		return nil
	}
	out := map[string]string{}
	for _, c := range hc.Jar.Cookies(u) {
		out[c.Name] = c.Value
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// ---- Treehole (docs/CAMPUS-PROTOCOLS.md §5.2) ----

type treeholeHop struct{}

func (treeholeHop) Service() string { return "treehole" }

func (treeholeHop) App(in *HopInput) (App, bool) {
	return App{ID: "PKU Helper", Redirect: in.Base("treehole") + "/chapi/cas_iaaa_login?version=3&uuid=" + in.Device + "&plat=web"}, true
}

// Exchange: cas_iaaa_login (302 to iaaa_success with token, expires_in
// as absolute Unix seconds, uid; or a 200 with the pku_token cookies),
// /chapi/version to refresh cookies, then the list_comments probe, which
// answers 40002 when the login SMS check is due (§5.4).
func (treeholeHop) Exchange(ctx context.Context, in *HopInput) (*Session, error) {
	base := in.Base("treehole")
	hdr := map[string]string{"User-Agent": uaDesktop146}
	resp, _, err := get(ctx, in.HTTP, base+"/chapi/cas_iaaa_login?version=3&uuid="+in.Device+"&plat=web&_rand="+randFloat()+"&token="+url.QueryEscape(in.Token), hdr)
	if err != nil {
		return nil, fmt.Errorf("treehole cas_iaaa_login: %w", err)
	}
	s := &Session{Service: "treehole", Device: in.Device, Created: in.Now.UTC()}
	var expires string
	switch {
	case resp.StatusCode/100 == 3:
		loc, err := resp.Location()
		if err != nil {
			return nil, fmt.Errorf("treehole cas_iaaa_login: redirect without a location")
		}
		q := loc.Query()
		s.Token, expires = q.Get("token"), q.Get("expires_in")
	case resp.StatusCode == http.StatusOK:
		ck := jarCookies(in.HTTP, base)
		s.Token, expires = ck["pku_token"], ck["pku_expires_in"]
	default:
		return nil, fmt.Errorf("treehole cas_iaaa_login: HTTP %d", resp.StatusCode)
	}
	if s.Token == "" {
		return nil, errors.New("treehole cas_iaaa_login: no token in the reply (the IAAA token was refused)")
	}
	if sec, err := strconv.ParseInt(expires, 10, 64); err == nil && sec > 0 {
		s.Expires = time.Unix(sec, 0).UTC()
	}
	auth := map[string]string{"Authorization": "Bearer " + s.Token, "Uuid": treeholeUUID(in.Device),
		"Accept": "application/json, text/plain, */*", "User-Agent": uaDesktop146}
	if _, _, err := get(ctx, in.HTTP, base+"/chapi/version?t="+strconv.FormatInt(in.Now.UnixMilli(), 10), auth); err != nil {
		return nil, fmt.Errorf("treehole version: %w", err)
	}
	code, err := treeholeCode(ctx, in.HTTP, http.MethodGet, base+"/chapi/api/v3/hole/list_comments?page=1&limit=1&comment_limit=0&comment_stream=1", "", auth)
	if err != nil {
		return nil, fmt.Errorf("treehole probe: %w", err)
	}
	s.Cookies = jarCookies(in.HTTP, base)
	if code.Code != 40002 {
		return s, nil
	}
	if in.SMS == nil {
		in.Pending = "sms"
		return s, nil
	}
	sent, err := treeholeCode(ctx, in.HTTP, http.MethodPost, base+"/chapi/api/jwt_send_msg", "{}", auth)
	if err != nil {
		return nil, fmt.Errorf("treehole jwt_send_msg: %w", err)
	}
	if !sent.Success && !strings.Contains(sent.Message, "未过期") {
		return nil, fmt.Errorf("treehole: sending the SMS failed: %s", sent.Message)
	}
	sms, err := in.SMS(ctx, "treehole", "树洞需要短信验证 / Treehole wants the SMS check: "+sent.Message)
	if err != nil {
		return nil, err
	}
	body, _ := json.Marshal(map[string]string{"valid_code": strings.TrimSpace(sms)})
	ok, err := treeholeCode(ctx, in.HTTP, http.MethodPost, base+"/chapi/api/jwt_msg_verify", string(body), auth)
	if err != nil {
		return nil, fmt.Errorf("treehole jwt_msg_verify: %w", err)
	}
	if !ok.Success {
		return nil, fmt.Errorf("treehole: the SMS code was refused: %s", ok.Message)
	}
	s.Cookies = jarCookies(in.HTTP, base)
	return s, nil
}

// thEnvelope is Treehole's reply envelope (§5.1).
type thEnvelope struct {
	Code    int    `json:"code"`
	Success bool   `json:"success"`
	Message string `json:"message"`
}

func treeholeCode(ctx context.Context, hc *http.Client, method, u, body string, hdr map[string]string) (*thEnvelope, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, redactURL(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized {
		return nil, errors.New("HTTP 401: the new token was refused")
	}
	var e thEnvelope
	if err := json.NewDecoder(io.LimitReader(resp.Body, 2<<20)).Decode(&e); err != nil {
		return nil, fmt.Errorf("HTTP %d, not Treehole's envelope", resp.StatusCode)
	}
	return &e, nil
}

// ---- Portal, then the campus card (docs/CAMPUS-PROTOCOLS.md §2.5) ----

type cardHop struct{}

func (cardHop) Service() string { return "card" }

func (cardHop) App(in *HopInput) (App, bool) {
	return App{ID: "portal2017", Redirect: in.Base("portal") + "/portal2017/ssoLogin.do"}, true
}

// cardJWTLife is what pkucli assumes when the JWT carries no exp (§2.5).
const cardJWTLife = 24 * time.Hour

// Exchange: ssoLogin.do (302, SESSION cookie), util/redirectToCard.do
// (302 to berserker-auth/cas/login/pku), that location (302 whose
// location carries synjones-auth=<JWT>); the mobile headers throughout.
// Each location must stay on the portal or card host.
func (cardHop) Exchange(ctx context.Context, in *HopInput) (*Session, error) {
	portal, card := in.Base("portal"), in.Base("card")
	hdr := map[string]string{"User-Agent": uaCardApp, "X-Requested-With": "cn.edu.pku.PKUAndroid"}
	resp, _, err := get(ctx, in.HTTP, portal+"/portal2017/ssoLogin.do?_rand="+randFloat()+"&token="+url.QueryEscape(in.Token), hdr)
	if err != nil {
		return nil, fmt.Errorf("portal ssoLogin.do: %w", err)
	}
	if resp.StatusCode/100 != 3 || jarCookies(in.HTTP, portal+"/portal2017")["SESSION"] == "" {
		return nil, fmt.Errorf("portal ssoLogin.do: HTTP %d without the SESSION cookie (the IAAA token was refused)", resp.StatusCode)
	}
	resp, _, err = get(ctx, in.HTTP, portal+"/portal2017/util/redirectToCard.do", hdr)
	if err != nil {
		return nil, fmt.Errorf("portal redirectToCard.do: %w", err)
	}
	loc, err := resp.Location()
	if resp.StatusCode/100 != 3 || err != nil {
		return nil, fmt.Errorf("portal redirectToCard.do: HTTP %d, no redirect to the card", resp.StatusCode)
	}
	if !sameHost(loc, card) {
		return nil, fmt.Errorf("portal redirectToCard.do: redirect to %s, not the card host", loc.Host)
	}
	resp, _, err = get(ctx, in.HTTP, loc.String(), hdr)
	if err != nil {
		return nil, fmt.Errorf("card cas/login/pku: %w", err)
	}
	loc2, err := resp.Location()
	if resp.StatusCode/100 != 3 || err != nil {
		return nil, fmt.Errorf("card cas/login/pku: HTTP %d, no redirect", resp.StatusCode)
	}
	jwt := loc2.Query().Get("synjones-auth")
	if jwt == "" {
		return nil, errors.New("card cas/login/pku: the redirect carries no synjones-auth token")
	}
	s := &Session{Service: "card", Token: jwt, Created: in.Now.UTC(), Expires: jwtExpiry(jwt, in.Now.Add(cardJWTLife))}
	return s, nil
}

// sameHost says whether u is on base's host name (ports aside: elective's
// documented redirect names port 80, its base none).
func sameHost(u *url.URL, base string) bool {
	b, err := url.Parse(base)
	return err == nil && strings.EqualFold(u.Hostname(), b.Hostname())
}

// jwtExpiry reads the exp claim (Unix seconds) of a JWT without checking
// its signature (the host is not the JWT's audience, only its carrier), or
// returns def when there is none.
func jwtExpiry(jwt string, def time.Time) time.Time {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return def.UTC()
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return def.UTC()
	}
	var claims struct {
		Exp json.Number `json:"exp"`
	}
	if json.Unmarshal(raw, &claims) != nil {
		return def.UTC()
	}
	if n, err := claims.Exp.Int64(); err == nil && n > 0 {
		return time.Unix(n, 0).UTC()
	}
	return def.UTC()
}

// ---- ITS (docs/CAMPUS-PROTOCOLS.md §9): its own account, no IAAA ----

type itsHop struct{}

func (itsHop) Service() string { return "its" }

func (itsHop) App(*HopInput) (App, bool) { return App{}, false }

// Exchange: POST /cas/webLogin (iprange=yes, rid=, username, password)
// with the ITS referer. Success is the home page (with 账户余额); a
// failure is a page whose script alerts the message and goes back in
// history, and its message is returned.
func (itsHop) Exchange(ctx context.Context, in *HopInput) (*Session, error) {
	base := in.Base("its")
	req := form(ctx, base+"/cas/webLogin", url.Values{"iprange": {"yes"}, "rid": {""}, "username": {in.User}, "password": {in.Password}})
	req.Header.Set("Referer", "https://its.pku.edu.cn/")
	req.Header.Set("User-Agent", uaDesktop147)
	resp, err := in.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("its webLogin: %w", err)
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 2<<20))
	resp.Body.Close()
	if msg, ok := itsAlert(string(b)); ok {
		return nil, &ITSRefusal{Msg: msg}
	}
	if resp.StatusCode/100 != 2 && resp.StatusCode/100 != 3 {
		return nil, fmt.Errorf("its webLogin: HTTP %d", resp.StatusCode)
	}
	ck := jarCookies(in.HTTP, base)
	if len(ck) == 0 {
		return nil, errors.New("its webLogin: no session cookie in the reply")
	}
	return &Session{Service: "its", Cookies: ck, Created: in.Now.UTC()}, nil
}

// ITSRefusal is ITS's refusal of the account at sign-in: the message of
// its failure page's alert (docs/CAMPUS-PROTOCOLS.md §9). Error is "its: MSG".
type ITSRefusal struct {
	// Msg is ITS's own message, e.g. 账号或密码错误.
	Msg string
}

// Error implements error.
func (e *ITSRefusal) Error() string { return "its: " + e.Msg }

// itsAlert finds ITS's failure page: alert("…") in a script followed by
// history.go(-1) or history.back() (§9 quirk: an alert alone is not an
// error).
func itsAlert(page string) (string, bool) {
	i := strings.Index(page, `alert("`)
	if i < 0 {
		i = strings.Index(page, `alert('`)
	}
	if i < 0 || !(strings.Contains(page[i:], "history.go(-1)") || strings.Contains(page[i:], "history.back()")) {
		return "", false
	}
	rest := page[i+7:]
	end := strings.IndexAny(rest, `"'`)
	if end < 0 {
		return "", false
	}
	return rest[:end], true
}

// ---- The services whose hop is a redirect that sets cookies ----

// cookieHop is the hop of Blackboard, elective, cwfw, cwpay, bdkj, library
// and library-space: GET the redirect with the IAAA token (_rand and
// token), following redirects on the service's own host by hand (at most
// five), and keep the cookies the service set. The facts are thin
// (docs/CAMPUS-PROTOCOLS.md §2.1 gives appids and redirects for some, nothing for
// the rest); facts says which parts are assumed.
type cookieHop struct {
	service, appID, path, facts string
	// redirect is the redirect URL the facts give when it is not the
	// service's Base and path (elective and bdkj register http URLs,
	// docs/CAMPUS-PROTOCOLS.md §2.1); a stand-in's base replaces it.
	redirect string
}

func (h *cookieHop) Service() string { return h.service }

func (h *cookieHop) App(in *HopInput) (App, bool) {
	base := in.Base(h.service)
	if svc := Lookup(h.service); h.redirect != "" && svc != nil && base == svc.Base {
		return App{ID: h.appID, Redirect: h.redirect}, true
	}
	return App{ID: h.appID, Redirect: base + h.path}, true
}

// Facts says which parts of the hop are documented and which assumed.
func (h *cookieHop) Facts() string { return h.facts }

func (h *cookieHop) Exchange(ctx context.Context, in *HopInput) (*Session, error) {
	base := in.Base(h.service)
	app, _ := h.App(in)
	u := app.Redirect // where IAAA would send the browser with the token
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	u += sep + "_rand=" + randFloat() + "&token=" + url.QueryEscape(in.Token)
	hdr := map[string]string{"User-Agent": uaDesktop147, "Accept-Language": "zh,zh-CN;q=0.9"}
	for i := 0; ; i++ {
		resp, _, err := get(ctx, in.HTTP, u, hdr)
		if err != nil {
			return nil, fmt.Errorf("%s sign-in: %w", h.service, err)
		}
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			return nil, fmt.Errorf("%s sign-in: HTTP %d (the IAAA token was refused)", h.service, resp.StatusCode)
		}
		if resp.StatusCode/100 != 3 || i == 5 {
			break
		}
		loc, err := resp.Location()
		if err != nil || !sameHost(loc, base) {
			break
		}
		u = loc.String()
	}
	ck := jarCookies(in.HTTP, base)
	if len(ck) == 0 {
		return nil, fmt.Errorf("%s sign-in: the service set no session cookie (the IAAA token was refused)", h.service)
	}
	return &Session{Service: h.service, Cookies: ck, Created: in.Now.UTC()}, nil
}
