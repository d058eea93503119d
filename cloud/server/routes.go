package server

import (
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/pkuinfo/harness/cloud/protocol"
)

// ServeHTTP routes on the escaped path, never on a cleaned or decoded one, so that `%2F`,
// `%2e%2e` and `//` inside store keys reach the key check instead of being rewritten.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	esc := r.URL.EscapedPath()
	// The whole request, body included, must arrive within BodyTimeout (ReadHeaderTimeout only
	// covers the headers); the socket and SSE handlers lift the deadline once they accept.
	http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.cfg.BodyTimeout))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if !strings.HasPrefix(esc, "/v1/") && !strings.HasPrefix(esc, "/s/") && !strings.HasPrefix(esc, "/w/") {
		s.run(w, r, notFound)
		return
	}
	segs := strings.Split(esc[1:], "/")
	route := func(h map[string]handlerFunc) {
		if f, ok := h[r.Method]; ok {
			s.run(w, r, f)
			return
		}
		if r.Method == http.MethodHead {
			if f, ok := h[http.MethodGet]; ok {
				s.run(w, r, f)
				return
			}
		}
		allow := make([]string, 0, len(h)+1)
		for m := range h {
			allow = append(allow, m)
			if m == http.MethodGet {
				allow = append(allow, http.MethodHead)
			}
		}
		sort.Strings(allow)
		w.Header().Set("Allow", strings.Join(allow, ", "))
		s.run(w, r, func(http.ResponseWriter, *http.Request) error {
			// 400, not 405: the seed's codes carry fixed statuses and none is 405 (see
			// docs/CLOUD.md); the Allow header still names the methods.
			return errf(protocol.CodeBadRequest, "method %s is not allowed here", r.Method)
		})
	}
	n := len(segs)
	switch segs[0] {
	case "s":
		if n == 2 {
			route(map[string]handlerFunc{"GET": s.shareRedirect(segs[1])})
			return
		}
	case "w":
		if n == 3 || n == 4 {
			asset := ""
			if n == 4 {
				asset = segs[3]
			}
			route(map[string]handlerFunc{"GET": s.viewerPage(segs[1], segs[2], asset)})
			return
		}
	case "v1":
		if n < 2 {
			break
		}
		switch segs[1] {
		case "meta":
			if n == 2 {
				route(map[string]handlerFunc{"GET": s.getMeta})
				return
			}
		case "devices":
			if n == 2 {
				route(map[string]handlerFunc{"POST": s.registerDevice})
				return
			}
			if n == 3 && segs[2] == "me" {
				route(map[string]handlerFunc{"DELETE": s.deleteDevice})
				return
			}
		case "auth":
			if n == 3 && segs[2] == "token" {
				route(map[string]handlerFunc{"POST": s.createToken})
				return
			}
		case "store":
			if n == 2 {
				route(map[string]handlerFunc{"GET": s.listStore})
				return
			}
			rawKey := esc[len("/v1/store/"):]
			route(map[string]handlerFunc{"GET": s.getStore(rawKey), "PUT": s.putStore(rawKey), "DELETE": s.deleteStore(rawKey)})
			return
		case "channels":
			switch {
			case n == 2:
				route(map[string]handlerFunc{"POST": s.createChannel})
				return
			case n == 3:
				route(map[string]handlerFunc{"PATCH": s.extendChannel(segs[2]), "DELETE": s.closeChannel(segs[2])})
				return
			case n == 4 && segs[3] == "ws":
				route(map[string]handlerFunc{"GET": s.ownerSocket(segs[2])})
				return
			case n == 4 && segs[3] == "mailbox":
				route(map[string]handlerFunc{"DELETE": s.clearMailbox(segs[2])})
				return
			case n == 5 && segs[3] == "mailbox":
				route(map[string]handlerFunc{"PUT": s.putMailbox(segs[2], segs[4]), "DELETE": s.deleteMailbox(segs[2], segs[4])})
				return
			}
		case "c":
			switch {
			case n == 3:
				route(map[string]handlerFunc{"GET": s.channelInfo(segs[2])})
				return
			case n == 4:
				id := segs[2]
				switch segs[3] {
				case "join":
					route(map[string]handlerFunc{"POST": s.joinChannel(id)})
					return
				case "ws":
					route(map[string]handlerFunc{"GET": s.peerSocket(id)})
					return
				case "events":
					route(map[string]handlerFunc{"GET": s.peerEvents(id)})
					return
				case "send":
					route(map[string]handlerFunc{"POST": s.peerSend(id)})
					return
				case "mailbox":
					route(map[string]handlerFunc{"GET": s.peerMailbox(id)})
					return
				}
			}
		case "fn":
			if s.cfg.Functions != nil {
				if n == 4 {
					route(map[string]handlerFunc{"POST": s.callFunction(segs[2], segs[3])})
					return
				}
				break
			}
			fallthrough
		case "push", "files":
			// Planned services (seed 003 “# 服务端函数”, “# 推送(规划中)”): 501 unsupported.
			s.run(w, r, func(http.ResponseWriter, *http.Request) error {
				return errf(protocol.CodeUnsupported, "the %s service is not offered by this provider", segs[1])
			})
			return
		}
	}
	s.run(w, r, notFound)
}

func notFound(w http.ResponseWriter, r *http.Request) error {
	return errf(protocol.CodeNotFound, "no such endpoint: %s", r.URL.EscapedPath())
}
