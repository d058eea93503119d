package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/pkuinfo/harness/internal/netguard"
	"github.com/pkuinfo/harness/internal/safefs"
)

// Fetcher reads one file of a plugin. name is the absolute URL the loader computed (for links) or
// the path relative to the folder (for LoadDir). Fetch reads at most max bytes: a longer file is
// ErrTooLarge, a missing one wraps fs.ErrNotExist. The loader never lists folders (seed: "the app
// never lists folders, any static host works").
type Fetcher interface {
	Fetch(ctx context.Context, name string, max int64) ([]byte, error)
}

// ErrTooLarge is returned by a Fetcher for a file longer than the bytes it was allowed.
var ErrTooLarge = errors.New("file too large")

// DirFetcher reads files from a local folder. Names are slash-separated paths relative to the
// folder; they cannot leave it (os.Root refuses "..", absolute paths and symlinks that escape).
// Only regular files are read: a named pipe or device is an error at once (it is opened without
// blocking), and a file's size is checked before any of it is read (package safefs).
type DirFetcher string

// Fetch reads the file name inside the folder.
func (d DirFetcher) Fetch(ctx context.Context, name string, max int64) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dir, err := safefs.Open(string(d))
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	b, err := dir.ReadFile(ctx, name, max)
	if errors.Is(err, safefs.ErrTooLarge) {
		return nil, ErrTooLarge
	}
	return b, err
}

// MapFetcher serves files from memory, keyed by the name the loader asks for (an absolute URL
// for Load, a relative path for LoadFiles). It is the fetcher for tests and for drafts passed as
// { files: { "PLUGIN.md": "…" } }.
type MapFetcher map[string][]byte

// Fetch returns the file stored under name.
func (m MapFetcher) Fetch(ctx context.Context, name string, max int64) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b, ok := m[name]
	if !ok {
		return nil, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
	}
	if int64(len(b)) > max {
		return nil, ErrTooLarge
	}
	return b, nil
}

// HTTPFetcher fetches files over https, and over plain http from this machine only (a URL whose
// host is LoopbackHost, for a plugin folder served locally during development). It refuses other
// schemes, follows at most 5 redirects (to https, or from a loopback http link to loopback http),
// reads at most the
// bytes it is allowed, and gives up after Timeout per file (10 s when zero) or when the context
// ends, whichever comes first. Without a Client it also refuses to connect to loopback, private,
// link-local and other non-public addresses (checked when dialling, after DNS), so that an
// install link cannot reach into the host's network; a plain http URL is the exception, and its
// connections go to loopback addresses only.
type HTTPFetcher struct {
	// Client sends the requests; nil means a client that dials public addresses only.
	Client *http.Client
	// Timeout bounds one file's fetch; zero means 10 seconds.
	Timeout time.Duration
}

// publicClient dials public addresses only.
var publicClient = &http.Client{Transport: &http.Transport{
	Proxy: nil,
	DialContext: (&net.Dialer{
		Timeout: 10 * time.Second,
		Control: func(network, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			ip, err := netip.ParseAddr(host)
			if err != nil {
				return fmt.Errorf("dial %s: not an IP address", address)
			}
			if !publicAddr(ip) {
				return fmt.Errorf("refusing to connect to %s: not a public address", ip)
			}
			return nil
		},
	}).DialContext,
	ForceAttemptHTTP2:   true,
	TLSHandshakeTimeout: 10 * time.Second,
	MaxIdleConns:        16,
	IdleConnTimeout:     30 * time.Second,
}}

// loopbackClient dials loopback addresses only: the client for plain http links.
var loopbackClient = &http.Client{Transport: &http.Transport{
	Proxy: nil,
	DialContext: (&net.Dialer{
		Timeout: 10 * time.Second,
		Control: func(network, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			ip, err := netip.ParseAddr(host)
			if err != nil {
				return fmt.Errorf("dial %s: not an IP address", address)
			}
			if !ip.Unmap().IsLoopback() {
				return fmt.Errorf("refusing to connect to %s: an http link may only reach this machine", ip)
			}
			return nil
		},
	}).DialContext,
	MaxIdleConns:    4,
	IdleConnTimeout: 30 * time.Second,
}}

// plainLoopback reports whether u is an http URL to this machine.
func plainLoopback(u *url.URL) bool {
	return strings.EqualFold(u.Scheme, "http") && LoopbackHost(u.Hostname())
}

// publicAddr reports whether ip may be dialled by publicClient: netguard's list, the one plugin
// requests are held to as well.
func publicAddr(ip netip.Addr) bool { return netguard.PublicAddr(ip) }

// Fetch GETs the https (or loopback http) URL name. A status other than 200 is an error naming
// the status; 404 wraps fs.ErrNotExist.
func (h *HTTPFetcher) Fetch(ctx context.Context, name string, max int64) ([]byte, error) {
	u, err := url.Parse(name)
	if err != nil || (u.Scheme != "https" && !plainLoopback(u)) {
		return nil, fmt.Errorf("%s: only https URLs (or http to localhost) can be fetched", name)
	}
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := h.Client
	switch {
	case client != nil:
	case u.Scheme == "http":
		client = loopbackClient
	default:
		client = publicClient
	}
	c := *client
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return fmt.Errorf("more than 5 redirects")
		}
		// http stays on this machine: only a loopback http link may redirect to loopback http.
		if req.URL.Scheme != "https" && !(plainLoopback(via[0].URL) && plainLoopback(req.URL)) {
			return fmt.Errorf("redirect to %s: only https is allowed", req.URL.Redacted())
		}
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, name, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain, text/markdown, application/json, application/yaml, */*")
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("%s: HTTP 404: %w", name, fs.ErrNotExist)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("%s: HTTP %d", name, resp.StatusCode)
	}
	if resp.ContentLength > max {
		return nil, ErrTooLarge
	}
	return readCapped(resp.Body, max)
}

func readCapped(r io.Reader, max int64) ([]byte, error) {
	if max < 0 {
		max = 0
	}
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, ErrTooLarge
	}
	return b, nil
}

// describeFetchError shortens a fetch error for a diagnostic.
func describeFetchError(name string, err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("cannot read %s: file not found", name)
	case errors.Is(err, ErrTooLarge):
		return fmt.Sprintf("cannot read %s: the loaded files would exceed %d KB", name, MaxTotalBytes>>10)
	}
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "open ")
	return fmt.Sprintf("cannot read %s: %s", name, msg)
}
