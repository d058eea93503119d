package campus

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
)

// The causes of an Unreachable.
const (
	CauseDNS     = "dns"     // the name does not resolve (not on the campus network, no VPN)
	CauseRefused = "refused" // the connection was refused or reset
	CauseTimeout = "timeout" // no answer in time
	CauseTLS     = "tls"     // the TLS handshake or certificate failed (a captive portal, a proxy)
	CauseServer  = "server"  // the service answered 5xx (down, or busy)
)

// Unreachable is a request that never reached a campus service, classified
// for a person: Host is the service's host, Cause one of the Cause…
// constants, Err the transport's error (the technical detail, shown with
// --verbose or in small print).
type Unreachable struct {
	Service, Host, Cause string
	Err                  error
}

// Error is the English message with the detail.
func (e *Unreachable) Error() string { return e.Message("en") + " (" + e.Err.Error() + ")" }

// Unwrap returns the transport's error.
func (e *Unreachable) Unwrap() error { return e.Err }

// Message words the failure for a person in lang ("zh-Hans" or "en"), without
// the technical detail: what could not be reached and what to check.
func (e *Unreachable) Message(lang string) string {
	name := serviceTitle(e.Service)
	zh := strings.HasPrefix(lang, "zh")
	switch e.Cause {
	case CauseServer:
		if zh {
			return fmt.Sprintf("%s(%s)暂时无法使用:服务器出错,请稍后再试", name, e.Host)
		}
		return fmt.Sprintf("%s (%s) is not working right now: the server failed; try again later", name, e.Host)
	case CauseTLS:
		if zh {
			return fmt.Sprintf("无法安全连接 %s(%s):网络可能需要先登录(如校园网认证页)或被代理拦截", name, e.Host)
		}
		return fmt.Sprintf("Cannot connect securely to %s (%s): the network may need a sign-in page first, or a proxy is in the way", name, e.Host)
	case CauseTimeout:
		if zh {
			return fmt.Sprintf("连接 %s(%s)超时:请确认已连接校园网或 VPN,稍后再试", name, e.Host)
		}
		return fmt.Sprintf("%s (%s) did not answer in time: check that you are on the campus network or VPN, then try again", name, e.Host)
	}
	if zh {
		return fmt.Sprintf("无法连接 %s(%s):请确认已连接校园网或 VPN", name, e.Host)
	}
	return fmt.Sprintf("Cannot reach %s (%s): check that you are on the campus network or VPN", name, e.Host)
}

// serviceTitle is the name a person knows a service by.
func serviceTitle(service string) string {
	if service == "iaaa" {
		return "IAAA"
	}
	if s := Lookup(service); s != nil && s.Title != "" {
		return s.Title
	}
	return service
}

// Classify returns err as an *Unreachable of service when it is a request that
// never reached the service (a name that does not resolve, a refused or reset
// connection, a timeout, a failed TLS handshake), and nil otherwise (an answer
// the service gave, a cancelled context). rawURL names the host; "" takes it
// from the error's *url.Error.
func Classify(service, rawURL string, err error) *Unreachable {
	if err == nil || errors.Is(err, context.Canceled) {
		return nil
	}
	var u *Unreachable
	if errors.As(err, &u) {
		return u
	}
	if rawURL == "" {
		var ue *url.Error
		if errors.As(err, &ue) {
			rawURL = ue.URL
		}
	}
	host := rawURL
	if p, perr := url.Parse(rawURL); perr == nil && p.Hostname() != "" {
		host = p.Hostname()
	}
	mk := func(cause string) *Unreachable {
		return &Unreachable{Service: service, Host: host, Cause: cause, Err: err}
	}
	var dns *net.DNSError
	var cert *tls.CertificateVerificationError
	var unknown x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var ne net.Error
	var record tls.RecordHeaderError
	var alert tls.AlertError
	switch {
	case errors.As(err, &dns):
		if dns.IsTimeout {
			return mk(CauseTimeout)
		}
		return mk(CauseDNS)
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return mk(CauseRefused)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return mk(CauseTimeout)
	case errors.As(err, &cert), errors.As(err, &unknown), errors.As(err, &hostErr), errors.As(err, &record), errors.As(err, &alert), errors.Is(err, http.ErrSchemeMismatch):
		return mk(CauseTLS)
	}
	return nil
}

// ServerError returns an *Unreachable with CauseServer for an HTTP status of
// 500 or more from service at rawURL, nil for any other status.
func ServerError(service, rawURL string, status int) *Unreachable {
	if status < 500 {
		return nil
	}
	host := rawURL
	if p, err := url.Parse(rawURL); err == nil && p.Hostname() != "" {
		host = p.Hostname()
	}
	return &Unreachable{Service: service, Host: host, Cause: CauseServer, Err: fmt.Errorf("HTTP %d", status)}
}

// Unreachable returns the sign-in error err as an *Unreachable when a request
// never reached its server, naming the server: IAAA when the host is IAAA's,
// else service. nil when err is not that.
func (s *Signer) Unreachable(service string, err error) *Unreachable {
	u := Classify(service, "", err)
	if u == nil {
		return nil
	}
	if p, perr := url.Parse(s.Base("iaaa")); perr == nil && strings.EqualFold(p.Hostname(), u.Host) {
		u.Service = "iaaa"
	}
	return u
}
