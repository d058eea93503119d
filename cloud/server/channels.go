package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strconv"

	"github.com/pkuinfo/harness/cloud/protocol"
)

// createChannel answers POST /v1/channels (seed 003 “# 通道(所有者)”).
func (s *Server) createChannel(w http.ResponseWriter, r *http.Request) error {
	c, err := s.pluginToken(w, r, protocol.ServiceChannels, false)
	if err != nil {
		return err
	}
	lim := s.cfg.Limits.Channels
	var req protocol.CreateChannelRequest
	if err := readJSON(w, r, 4*lim.FrameBytes+4096, &req); err != nil {
		return err
	}
	if req.TtlS < lim.MinTtlS || req.TtlS > lim.MaxTtlS {
		return errf(protocol.CodeBadRequest, "ttlS: %d is outside %d–%d", req.TtlS, lim.MinTtlS, lim.MaxTtlS)
	}
	maxPeers := int64(1)
	if req.MaxPeers != nil {
		maxPeers = *req.MaxPeers
	}
	if maxPeers > lim.MaxPeers {
		return errf(protocol.CodeBadRequest, "maxPeers: %d is over the limit of %d", maxPeers, lim.MaxPeers)
	}
	if pub, _ := protocol.DecodeKey32(req.ChanPub); protocol.CheckX25519Public(pub) != nil {
		return errf(protocol.CodeBadRequest, "chanPub: a low-order X25519 key")
	}
	if n := req.Meta.CiphertextLen(); int64(n) > lim.FrameBytes {
		return errf(protocol.CodePayloadTooLarge, "meta ciphertext is %d bytes, the limit is %d", n, lim.FrameBytes)
	}
	now := s.nowMs()
	ch := Channel{ID: randomID(16), Device: c.Sub, Plugin: c.Plg, JoinHash: req.JoinHash, ChanPub: req.ChanPub,
		Meta: *req.Meta, MaxPeers: int(maxPeers), Page: req.Page, Status: protocol.StatusOpen,
		CreatedAt: now, ExpiresAt: now + req.TtlS*1000}
	var qe *QuotaError
	if err := s.st.CreateChannel(r.Context(), ch, int(lim.MaxOpen), now); errors.As(err, &qe) {
		return errf(protocol.CodeQuota, "this device already has %s", qe.Limit)
	} else if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, protocol.CreateChannelResponse{ID: ch.ID, ExpiresAt: ch.ExpiresAt})
	return nil
}

// ownedRoom checks the plugin token and that its (device, plugin) owns the open channel id.
func (s *Server) ownedRoom(w http.ResponseWriter, r *http.Request, id string, queryToken bool) (*room, error) {
	c, err := s.pluginToken(w, r, protocol.ServiceChannels, queryToken)
	if err != nil {
		return nil, err
	}
	rm, err := s.hub.room(r.Context(), id)
	if err != nil {
		return nil, err
	}
	if rm.ch.Device != c.Sub || rm.ch.Plugin != c.Plg {
		return nil, errf(protocol.CodeForbidden, "not the owner of this channel")
	}
	return rm, nil
}

func (s *Server) extendChannel(id string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		rm, err := s.ownedRoom(w, r, id, false)
		if err != nil {
			return err
		}
		var req protocol.PatchChannelRequest
		if err := readJSON(w, r, 1024, &req); err != nil {
			return err
		}
		ttl := min(req.TtlS, s.cfg.Limits.Channels.MaxTtlS)
		exp := s.nowMs() + ttl*1000
		rm.mu.Lock()
		defer rm.mu.Unlock()
		if rm.closed {
			return errf(protocol.CodeGone, "the channel is closed")
		}
		if err := s.st.SetChannelExpiry(r.Context(), id, exp); err != nil {
			return err
		}
		rm.ch.ExpiresAt = exp
		rm.pub(event{K: evExtend, At: exp})
		b := peerFrame(protocol.PeerInFrame{T: protocol.FrameExtended, ExpiresAt: exp})
		for _, st := range rm.seats {
			if st.conn != nil {
				st.conn.enqueue(b)
			}
		}
		writeJSON(w, http.StatusOK, protocol.PatchChannelResponse{ExpiresAt: exp})
		return nil
	}
}

func (s *Server) closeChannel(id string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if _, err := s.ownedRoom(w, r, id, false); err != nil {
			return err
		}
		if err := s.st.SetChannelStatus(r.Context(), id, protocol.StatusClosed); err != nil {
			return err
		}
		s.hub.dropRoom(id, protocol.ReasonOwner)
		writeJSON(w, http.StatusOK, okBody)
		return nil
	}
}

func (s *Server) putMailbox(id, slot string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		rm, err := s.ownedRoom(w, r, id, false)
		if err != nil {
			return err
		}
		if !protocol.ValidMailboxSlot(slot) {
			return errf(protocol.CodeBadRequest, "slot: must match ^[A-Za-z0-9._:-]{1,64}$")
		}
		lim := s.cfg.Limits
		var req protocol.MailboxPutRequest
		if err := readJSON(w, r, 2*lim.Store.MaxValueBytes+1024, &req); err != nil {
			return err
		}
		if n := req.Env.CiphertextLen(); int64(n) > lim.Store.MaxValueBytes {
			return errf(protocol.CodePayloadTooLarge, "the blob is %d bytes, the limit is %d", n, lim.Store.MaxValueBytes)
		}
		now := s.nowMs()
		it := MailboxItem{Slot: slot, Env: *req.Env, ExpiresAt: now + min(req.TtlS, lim.Channels.MaxTtlS)*1000}
		var qe *QuotaError
		if err := s.st.MailboxPut(r.Context(), rm.ch.ID, it, int(lim.Channels.MailboxSlots), now); errors.As(err, &qe) {
			return errf(protocol.CodeQuota, "the mailbox is full: %s", qe.Limit)
		} else if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, okBody)
		return nil
	}
}

func (s *Server) deleteMailbox(id, slot string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		rm, err := s.ownedRoom(w, r, id, false)
		if err != nil {
			return err
		}
		if !protocol.ValidMailboxSlot(slot) {
			return errf(protocol.CodeBadRequest, "slot: must match ^[A-Za-z0-9._:-]{1,64}$")
		}
		if err := s.st.MailboxDelete(r.Context(), rm.ch.ID, slot); errors.Is(err, ErrNotFound) {
			return errf(protocol.CodeNotFound, "no mailbox slot %q", slot)
		} else if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, okBody)
		return nil
	}
}

func (s *Server) clearMailbox(id string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		rm, err := s.ownedRoom(w, r, id, false)
		if err != nil {
			return err
		}
		if err := s.st.MailboxClear(r.Context(), rm.ch.ID); err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, okBody)
		return nil
	}
}

// ----- peers (seed 003 “# 通道(对端)”) -----

func (s *Server) channelInfo(id string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := s.limit(w, s.infos, s.clientIP(r)); err != nil {
			return err
		}
		if !protocol.ValidID(id) {
			return errf(protocol.CodeNotFound, "no channel %q", id)
		}
		ch, err := s.st.Channel(r.Context(), id)
		if errors.Is(err, ErrNotFound) {
			return errf(protocol.CodeNotFound, "no channel %q", id)
		} else if err != nil {
			return err
		}
		status := ch.Status
		if status == protocol.StatusOpen && ch.ExpiresAt <= s.nowMs() {
			status = protocol.StatusExpired
		}
		online := status == protocol.StatusOpen && s.hub.ownerOnline(id)
		if status == protocol.StatusOpen && !online && s.hub.cl != nil {
			online = s.hub.ownerOnlineAnywhere(r.Context(), id)
		}
		writeJSON(w, http.StatusOK, protocol.ChannelInfoResponse{Status: status, Meta: ch.Meta, ChanPub: ch.ChanPub,
			ExpiresAt: ch.ExpiresAt, OwnerOnline: online})
		return nil
	}
}

func (s *Server) joinChannel(id string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := s.limit(w, s.joins, s.clientIP(r)); err != nil {
			return err
		}
		var req protocol.JoinRequest
		if err := readJSON(w, r, 1024, &req); err != nil {
			return err
		}
		if pub, _ := protocol.DecodeKey32(req.PeerPub); protocol.CheckX25519Public(pub) != nil {
			return errf(protocol.CodeBadRequest, "peerPub: a low-order X25519 key")
		}
		rm, err := s.hub.room(r.Context(), id)
		if err != nil {
			return err
		}
		authKey, _ := protocol.DecodeKey32(req.AuthKey)
		h := sha256.Sum256(authKey)
		want, _ := protocol.B64.DecodeString(rm.ch.JoinHash)
		if subtle.ConstantTimeCompare(h[:], want) != 1 {
			return errf(protocol.CodeForbidden, "wrong authKey")
		}
		token := "pk1." + randomID(24)
		now := s.nowMs()
		p := Peer{ID: randomID(9), Pub: req.PeerPub, TokenHash: sha256B64(token), JoinedAt: now}
		rm.mu.Lock()
		defer rm.mu.Unlock()
		if rm.closed {
			return errf(protocol.CodeGone, "the channel is closed")
		}
		if len(rm.seats) >= rm.ch.MaxPeers {
			return errf(protocol.CodeConflict, "the channel is full (%d of %d seats taken)", len(rm.seats), rm.ch.MaxPeers)
		}
		if err := s.st.AddPeer(r.Context(), id, p, rm.ch.MaxPeers); errors.Is(err, ErrConflict) {
			return errf(protocol.CodeConflict, "the channel is full")
		} else if err != nil {
			return err
		}
		st := &seat{p: p}
		rm.seats[p.ID] = st
		rm.byToken[p.TokenHash] = st
		rm.pub(event{K: evJoin, Peer: p.ID, Pub: p.Pub, Tok: p.TokenHash, At: now})
		if rm.owner != nil {
			rm.owner.enqueue(ownerFrame(protocol.OwnerInFrame{T: protocol.FrameJoin, PeerID: p.ID, PeerPub: p.Pub, At: now}))
		}
		writeJSON(w, http.StatusOK, protocol.JoinResponse{PeerID: p.ID, PeerToken: token, ExpiresAt: rm.ch.ExpiresAt})
		return nil
	}
}

// peerSeat reads the peer token (`?t=` or bearer) and finds its seat in the open channel id.
func (s *Server) peerSeat(r *http.Request, id string) (*room, *seat, error) {
	tok, ok := bearer(r)
	if !ok {
		tok = r.URL.Query().Get("t")
	}
	if len(tok) < 16 {
		return nil, nil, errf(protocol.CodeUnauthorized, "missing or malformed peer token")
	}
	rm, err := s.hub.room(r.Context(), id)
	if err != nil {
		return nil, nil, err
	}
	st := rm.seatByToken(sha256B64(tok))
	if st == nil && s.hub.cl != nil {
		// A seat given by another node whose join event has not arrived (or was lost).
		if ch, p, err := s.st.PeerByToken(r.Context(), sha256B64(tok)); err == nil && ch == id {
			st = rm.addSeat(p)
		}
	}
	if st == nil {
		return nil, nil, errf(protocol.CodeUnauthorized, "unknown peer token (kicked, or for another channel)")
	}
	return rm, st, nil
}

func (s *Server) peerSend(id string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		rm, st, err := s.peerSeat(r, id)
		if err != nil {
			return err
		}
		body, err := readBody(w, r, protocol.MaxFrameJSON)
		if err != nil {
			return err
		}
		pe, reply := s.relayPeerFrame(rm, st, body)
		if pe != nil {
			if pe.Code == protocol.CodeRateLimited {
				h := w.Header()
				h.Set("Retry-After", strconv.FormatInt(pe.RetryAfterS, 10))
				pol := s.cfg.Limits.Channels.FramesPerMin
				h.Set("RateLimit-Policy", `"frames";q=`+itoa(pol)+";w=60")
				h.Set("RateLimit", `"frames";r=0;t=`+itoa(pe.RetryAfterS))
			}
			return pe
		}
		if reply != nil {
			rm.mu.Lock()
			if st.conn != nil {
				st.conn.enqueue(reply)
			}
			rm.mu.Unlock()
		}
		writeJSON(w, http.StatusOK, okBody)
		return nil
	}
}

func (s *Server) peerMailbox(id string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		rm, _, err := s.peerSeat(r, id)
		if err != nil {
			return err
		}
		items, err := s.st.MailboxList(r.Context(), rm.ch.ID, s.nowMs())
		if err != nil {
			return err
		}
		resp := protocol.MailboxListResponse{Items: make([]protocol.MailboxItem, 0, len(items))}
		for _, it := range items {
			resp.Items = append(resp.Items, protocol.MailboxItem{Slot: it.Slot, Env: it.Env, ExpiresAt: it.ExpiresAt})
		}
		writeJSON(w, http.StatusOK, resp)
		return nil
	}
}
