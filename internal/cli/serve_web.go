package cli

import (
	"context"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/api"
	"github.com/pkuinfo/harness/web"
)

// The web app (package web) on harness serve: its page at the app's routes and assets under
// /assets/, outside the API's guard (public files with no data), and POST /v1/ui/draw behind it.
func init() {
	RegisterServeSetup(func(_ context.Context, h *host.Host, srv *api.Server) error {
		app := web.Handler()
		for _, p := range web.AppRoutes {
			srv.HandleStatic(p, app)
		}
		srv.HandleStatic("GET /assets/", app)
		web.Routes(srv, h)
		return nil
	})
}
