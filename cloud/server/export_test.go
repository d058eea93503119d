package server

// RemoteRequests is the sum of the per-device request counts the other nodes have told this
// one about in their current windows (tests of the gossiped request limit).
func (s *Server) RemoteRequests() int {
	l := s.requests
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, w := range l.remote {
		n += w.n
	}
	return n
}
