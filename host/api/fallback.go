package api

import (
	"net/http"
	"slices"
	"strings"
)

// routeMethods are the methods a route of the API may take; the fallback probes each to
// build a 405's Allow header.
var routeMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// fallback answers every request no route matches, in the API's JSON error shape
// (docs/HOST-API.md "Errors") instead of net/http's plain text: 405 method_not_allowed with an
// Allow header when the path is a route for other methods, else 404 not_found. It is
// registered as the pattern "/", so it sees exactly the requests the routes leave.
func (s *Server) fallback(w http.ResponseWriter, r *http.Request) error {
	if allow := s.allowed(r); len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		return &Error{Status: http.StatusMethodNotAllowed, Code: "method_not_allowed",
			Message: "method " + r.Method + " is not allowed on " + r.URL.Path + "; use " + strings.Join(allow, " or ")}
	}
	return &Error{Status: http.StatusNotFound, Code: "not_found", Message: "no such route: " + r.Method + " " + r.URL.Path}
}

// allowed lists the methods that a route other than the fallback takes for r's path, in
// routeMethods order.
func (s *Server) allowed(r *http.Request) []string {
	var allow []string
	for _, m := range routeMethods {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "" && pattern != "/" && !slices.Contains(allow, m) {
			allow = append(allow, m)
		}
	}
	return allow
}
