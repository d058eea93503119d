package abilities

import (
	"context"
	"fmt"
	"net/url"
	"slices"

	"github.com/pkuinfo/harness/host/campus"
)

// browserOpen is browser.open { url } (read). The host cannot open a
// browser itself; it hands the URL to the client, which opens it outside
// the app. Result: { status: 'open_url', url, target: 'browser' }. Only
// absolute https URLs with a host are accepted.
func (s *Set) browserOpen(_ context.Context, c *call) (any, error) {
	if err := c.args.only("url"); err != nil {
		return nil, err
	}
	raw, err := c.args.str("url", true, 2048)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil {
		return nil, fmt.Errorf("url %q: only https URLs with a host (and no user info) can be opened", raw)
	}
	return obj("status", "open_url", "url", u.String(), "target", "browser"), nil
}

// campusPageOpen is campusPage.open { service } (read): the client opens
// the campus site in its signed-in web view. Result: { status: 'open_url',
// url, target: 'campusPage', service, signedIn }; signedIn says whether
// the host holds a session for the service (when it does not, the client
// should offer `harness campus login SERVICE` first). The service must be
// a campus service and, when the Set knows the plugin, one it declares in
// `campus`.
func (s *Set) campusPageOpen(ctx context.Context, c *call) (any, error) {
	if err := c.args.only("service"); err != nil {
		return nil, err
	}
	name, err := c.args.str("service", true, 40)
	if err != nil {
		return nil, err
	}
	svc := campus.Lookup(name)
	if svc == nil {
		return nil, fmt.Errorf("service %q is not a campus service", name)
	}
	if c.man != nil && !slices.Contains(c.man.Campus, name) {
		return nil, fmt.Errorf("campus service %s is not in the campus of plugin %s", name, c.Plugin)
	}
	signedIn := false
	if _, ok, err := campus.NewSQLSessions(s.db).Get(ctx, name); err != nil {
		return nil, err
	} else {
		signedIn = ok
	}
	return obj("status", "open_url", "url", svc.Base+svc.Home, "target", "campusPage", "service", name, "signedIn", signedIn), nil
}
