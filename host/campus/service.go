package campus

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

// User-Agent strings the campus servers expect (docs/CAMPUS-PROTOCOLS.md §1.1).
const (
	uaDesktop147 = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/147.0.0.0 Safari/537.36"
	uaDesktop146 = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/146.0.0.0 Safari/537.36"
	uaCardApp    = "PKUANDROID2.2.0_SM-S938B Dalvik/2.1.0 (Linux; U; Android 15; SM-S938B Build/BP1A.250305.020) okhttp/4.12.0"
)

// Credential says what a service's session must hold.
type Credential int

const (
	// CredCookie: the service signs with cookies (a token is optional).
	CredCookie Credential = iota + 1
	// CredToken: the service signs with a bearer token (cookies optional).
	CredToken
)

// Service is the adapter for one campus service: where it lives and how a
// request to it is signed. Sign sets headers (and fixed parameters) on a
// request whose URL already points at Base; it never removes what the
// plugin set, except headers that carry credentials, which only the
// session may set.
type Service struct {
	// Name is the campus service name a manifest lists, e.g. "treehole".
	Name string
	// Title is the service's name for people.
	Title string
	// Base is the scheme and host requests go to, e.g.
	// "https://treehole.pku.edu.cn".
	Base string
	// Home is the page campusPage.open shows, relative to Base.
	Home string
	// Needs is what a session must hold for Sign to work.
	Needs Credential
	// Source says where Base and the signing come from: a section of
	// docs/CAMPUS-PROTOCOLS.md, or "assumed" when no source establishes it yet.
	Source string
	// sign adds the service's headers; s is never nil and holds what Needs
	// requires.
	sign func(req *http.Request, s *Session) error
}

// Services are the adapters, one per name in plugin.CampusServices, in the
// same order.
var Services = []*Service{
	{Name: "card", Title: "校园卡 Campus Card", Base: "https://bdcard.pku.edu.cn", Home: "/", Needs: CredToken,
		Source: "docs/CAMPUS-PROTOCOLS.md §8.1", sign: signCard},
	{Name: "its", Title: "网费 ITS", Base: "https://its.pku.edu.cn", Home: "/", Needs: CredCookie,
		Source: "docs/CAMPUS-PROTOCOLS.md §9", sign: signITS},
	{Name: "treehole", Title: "树洞 Treehole", Base: "https://treehole.pku.edu.cn", Home: "/web/", Needs: CredToken,
		Source: "docs/CAMPUS-PROTOCOLS.md §5.1", sign: signTreehole},
	{Name: "blackboard", Title: "教学网 Blackboard", Base: "https://course.pku.edu.cn", Home: "/", Needs: CredCookie,
		Source: "assumed (docs/CAMPUS-PROTOCOLS.md §2.1 names the IAAA appid only)", sign: signDesktop},
	{Name: "elective", Title: "选课 Elective", Base: "https://elective.pku.edu.cn", Home: "/elective2008/", Needs: CredCookie,
		Source: "docs/CAMPUS-PROTOCOLS.md §2.1 (served over https here; the IAAA redirect is http)", sign: signDesktop},
	{Name: "cwfw", Title: "财务 cwfw", Base: "https://cwfw.pku.edu.cn", Home: "/WFManager/home2.jsp", Needs: CredCookie,
		Source: "docs/CAMPUS-PROTOCOLS.md §2.1", sign: signDesktop},
	{Name: "cwpay", Title: "财务缴费 cwpay", Base: "https://cwsf.pku.edu.cn", Home: "/", Needs: CredCookie,
		Source: "assumed (docs/CAMPUS-PROTOCOLS.md §9 names cwsf.pku.edu.cn as a payment host)", sign: signDesktop},
	{Name: "bdkj", Title: "场地预约 bdkj", Base: "https://bdkj.pku.edu.cn", Home: "/", Needs: CredCookie,
		Source: "docs/CAMPUS-PROTOCOLS.md §2.1 (served over https here; the IAAA redirect is http)", sign: signDesktop},
	{Name: "library", Title: "图书馆 Library", Base: "https://www.lib.pku.edu.cn", Home: "/", Needs: CredCookie,
		Source: "assumed (not in docs/CAMPUS-PROTOCOLS.md)", sign: signDesktop},
	{Name: "library-space", Title: "图书馆空间预约 Library spaces", Base: "https://seat.lib.pku.edu.cn", Home: "/", Needs: CredCookie,
		Source: "assumed (not in docs/CAMPUS-PROTOCOLS.md)", sign: signDesktop},
}

// Lookup returns the adapter of a campus service, or nil when name is not a
// campus service.
func Lookup(name string) *Service {
	for _, s := range Services {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// credentialHeaders are the headers only a session may set: a plugin's own
// values are dropped before signing.
var credentialHeaders = []string{"Authorization", "Cookie", "Synjones-Auth", "Uuid", "X-Xsrf-Token"}

func setCookies(req *http.Request, s *Session) {
	if c := s.CookieHeader(); c != "" {
		req.Header.Set("Cookie", c)
	}
}

func setDefault(req *http.Request, name, value string) {
	// The interpreter puts its own User-Agent on every request; campus
	// servers want theirs (docs/CAMPUS-PROTOCOLS.md §1.1).
	if name == "User-Agent" || req.Header.Get(name) == "" {
		req.Header.Set(name, value)
	}
}

// signDesktop: cookies and the desktop browser headers.
func signDesktop(req *http.Request, s *Session) error {
	setCookies(req, s)
	setDefault(req, "User-Agent", uaDesktop147)
	setDefault(req, "Accept-Language", "zh,zh-CN;q=0.9")
	return nil
}

// signITS: cookies, the desktop headers and the ITS referer (§9).
func signITS(req *http.Request, s *Session) error {
	signDesktop(req, s)
	setDefault(req, "Referer", "https://its.pku.edu.cn/")
	return nil
}

// signTreehole: Bearer JWT, the uuid header built from the device id, the
// JSON accept header, the Chrome 146 UA and the cookie jar (§5.1).
func signTreehole(req *http.Request, s *Session) error {
	req.Header.Set("Authorization", "Bearer "+s.Token)
	req.Header.Set("Uuid", treeholeUUID(s.Device))
	setDefault(req, "Accept", "application/json, text/plain, */*")
	setDefault(req, "User-Agent", uaDesktop146)
	setCookies(req, s)
	return nil
}

// treeholeUUID builds Treehole's uuid header
// "Web_PKUHOLE_2.0.0_WEB_UUID_<23 chars>-<12 hex device id>" (§5.1). The
// 23-character middle is derived from the device id so the header is stable
// across requests, as pkucli keeps it stable across sign-ins.
func treeholeUUID(device string) string {
	mid := hex.EncodeToString([]byte(device))
	for len(mid) < 20 {
		mid += "0"
	}
	mid = mid[:8] + "-" + mid[8:12] + "-" + mid[12:16] + "-" + mid[16:20]
	return "Web_PKUHOLE_2.0.0_WEB_UUID_" + mid[:23] + "-" + device
}

// newDevice returns a fresh 12-hex device id.
func newDevice() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// signCard: synjones-auth with a lower-case "bearer", synaccesssource: h5
// as a header, synAccessSource=h5 as a query parameter on GET and as a
// field of a JSON object body on POST, and the Android app's headers (§8.1,
// §1.2).
func signCard(req *http.Request, s *Session) error {
	req.Header.Set("Synjones-Auth", "bearer "+s.Token)
	req.Header.Set("Synaccesssource", "h5")
	setDefault(req, "User-Agent", uaCardApp)
	setDefault(req, "X-Requested-With", "cn.edu.pku.PKUAndroid")
	setCookies(req, s)
	if req.Method == http.MethodGet || req.Method == http.MethodHead {
		if req.URL.Query().Get("synAccessSource") == "" {
			req.URL.RawQuery = appendQuery(req.URL.RawQuery, "synAccessSource=h5")
		}
		return nil
	}
	if req.Body != nil && strings.Contains(req.Header.Get("Content-Type"), "json") {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return err
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(b, &m) == nil && m != nil {
			if _, ok := m["synAccessSource"]; !ok {
				// Append the field, keeping the plugin's own bytes and order.
				trimmed := bytes.TrimRight(b, " \t\r\n")
				body := trimmed[:len(trimmed)-1]
				if len(m) > 0 {
					body = append(body, ',')
				}
				b = append(append([]byte{}, body...), []byte(`"synAccessSource":"h5"}`)...)
			}
		}
		req.Body = io.NopCloser(bytes.NewReader(b))
		req.ContentLength = int64(len(b))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	return nil
}

func appendQuery(raw, kv string) string {
	if raw == "" {
		return kv
	}
	return raw + "&" + kv
}

// expiredReply says why resp shows the session has expired, or "" when it
// does not (docs/HOST-API.md "Campus sign-in"): HTTP 401 from any service (Treehole's "登录已失效",
// docs/CAMPUS-PROTOCOLS.md §5.3; the card's, §8.1); the card's envelope with code
// 401 (§8.1; whatever the Content-Type; the first 64 KiB are read and put back, so the plugin gets
// the whole reply); for the cookie services, a
// redirect to IAAA's sign-in (assumed: a service whose session ended sends
// the browser to IAAA); for ITS a redirect to its own sign-in page
// (assumed, §9 has no fact).
func (s *Service) expiredReply(resp *http.Response) string {
	if resp.StatusCode == http.StatusUnauthorized {
		return "the session expired (HTTP 401)"
	}
	switch {
	case s.Name == "card":
		// The envelope is JSON whatever the Content-Type says; peek at the
		// first 64 KiB and put them back in front of the rest.
		orig := resp.Body
		b, err := io.ReadAll(io.LimitReader(orig, 64<<10))
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(b), orig), orig}
		if err != nil {
			return ""
		}
		var env struct {
			Code    json.Number `json:"code"`
			Message string      `json:"message"`
		}
		if json.Unmarshal(b, &env) == nil && env.Code.String() == "401" {
			if env.Message != "" {
				return "the session expired (card: " + env.Message + ")"
			}
			return "the session expired (card code 401)"
		}
	case resp.StatusCode/100 == 3:
		loc, err := resp.Location()
		if err != nil {
			return ""
		}
		if strings.HasPrefix(loc.Path, "/iaaa/") || strings.EqualFold(loc.Host, "iaaa.pku.edu.cn") {
			return "the session expired (the service sent the IAAA sign-in page)"
		}
		if s.Name == "its" && strings.Contains(strings.ToLower(loc.Path), "login") {
			return "the session expired (ITS sent its sign-in page)"
		}
	}
	return ""
}
