package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/pkuinfo/harness/cloud/protocol"
)

// storeListPage is the most keys one GET /v1/store answers; `cursor` fetches the next page.
const storeListPage = 200

// decodeStoreKey turns the escaped path after /v1/store/ into a key: each segment is
// percent-decoded on its own, a decoded segment may not contain "/" (no %2F smuggling), and the
// joined key must pass protocol.CheckStoreKey (no "", ".", ".." segments, allowed characters,
// ≤ 256 bytes).
func decodeStoreKey(raw string) (string, error) {
	if raw == "" {
		return "", errf(protocol.CodeBadRequest, "key: must not be empty")
	}
	segs := strings.Split(raw, "/")
	for i, seg := range segs {
		d, err := url.PathUnescape(seg)
		if err != nil {
			return "", errf(protocol.CodeBadRequest, "key: segment %d is not valid percent-encoding", i+1)
		}
		if strings.Contains(d, "/") {
			return "", errf(protocol.CodeBadRequest, "key: segment %d contains an encoded '/'", i+1)
		}
		segs[i] = d
	}
	key := strings.Join(segs, "/")
	if err := protocol.CheckStoreKey(key); err != nil {
		return "", errf(protocol.CodeBadRequest, "%v", err)
	}
	return key, nil
}

func (s *Server) storeNS(w http.ResponseWriter, r *http.Request) (Namespace, error) {
	c, err := s.pluginToken(w, r, protocol.ServiceStore, false)
	if err != nil {
		return Namespace{}, err
	}
	return Namespace{Device: c.Sub, Plugin: c.Plg}, nil
}

// listStore answers GET /v1/store?prefix=&cursor=.
func (s *Server) listStore(w http.ResponseWriter, r *http.Request) error {
	ns, err := s.storeNS(w, r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	prefix := q.Get("prefix")
	if !protocol.ValidStorePrefix(prefix) {
		return errf(protocol.CodeBadRequest, "prefix: only the characters of a store key, at most 256 bytes")
	}
	after := ""
	if c := q.Get("cursor"); c != "" {
		b, err := protocol.B64.DecodeString(c)
		if err != nil || protocol.CheckStoreKey(string(b)) != nil {
			return errf(protocol.CodeBadRequest, "cursor: not a cursor this server gave")
		}
		after = string(b)
	}
	items, err := s.st.StoreList(r.Context(), ns, prefix, after, storeListPage+1, s.nowMs())
	if err != nil {
		return err
	}
	resp := protocol.StoreListResponse{Items: make([]protocol.StoreListItem, 0, len(items))}
	if len(items) > storeListPage {
		items = items[:storeListPage]
		resp.Cursor = protocol.B64.EncodeToString([]byte(items[len(items)-1].Key))
	}
	for _, it := range items {
		resp.Items = append(resp.Items, protocol.StoreListItem{Key: it.Key, Version: it.Version, UpdatedAt: it.UpdatedAt})
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

func (s *Server) getStore(raw string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		ns, err := s.storeNS(w, r)
		if err != nil {
			return err
		}
		key, err := decodeStoreKey(raw)
		if err != nil {
			return err
		}
		it, err := s.st.StoreGet(r.Context(), ns, key, s.nowMs())
		if errors.Is(err, ErrNotFound) {
			return errf(protocol.CodeNotFound, "no value at %q", key)
		} else if err != nil {
			return err
		}
		resp := protocol.StoreGetResponse{Key: key, Version: it.Version, UpdatedAt: it.UpdatedAt}
		if len(it.Value) > 0 {
			resp.Value = it.Value
		}
		if it.ExpiresAt != 0 {
			e := it.ExpiresAt
			resp.ExpiresAt = &e
		}
		w.Header().Set("ETag", etag(it.Version))
		writeJSON(w, http.StatusOK, resp)
		return nil
	}
}

func etag(v int64) string { return `"` + strconv.FormatInt(v, 10) + `"` }

// parseIfMatch reads If-Match as a version: `5` or the ETag form `"5"`. Absent: nil.
func parseIfMatch(h string) (*int64, error) {
	if h == "" {
		return nil, nil
	}
	v := strings.TrimSpace(h)
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		v = v[1 : len(v)-1]
	}
	if v == "" || len(v) > 18 {
		return nil, errf(protocol.CodeBadRequest, "If-Match must be a version number")
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return nil, errf(protocol.CodeBadRequest, "If-Match must be a version number")
		}
	}
	n, _ := strconv.ParseInt(v, 10, 64)
	return &n, nil
}

func (s *Server) putStore(raw string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		ns, err := s.storeNS(w, r)
		if err != nil {
			return err
		}
		key, err := decodeStoreKey(raw)
		if err != nil {
			return err
		}
		ifMatch, err := parseIfMatch(r.Header.Get("If-Match"))
		if err != nil {
			return err
		}
		lim := s.cfg.Limits.Store
		var req protocol.StorePutRequest
		// Room for the value, JSON escaping of an envelope and the ttlS field; the value's own
		// size is checked below against maxValueBytes.
		if err := readJSON(w, r, 2*lim.MaxValueBytes+1024, &req); err != nil {
			return err
		}
		// A JSON null is a value (seed 003 `value?: unknown`): it is stored and read back as
		// null; only an absent value is none.
		var value []byte
		if len(req.Value) > 0 {
			var buf bytes.Buffer
			if err := json.Compact(&buf, req.Value); err != nil {
				return errf(protocol.CodeBadRequest, "value: %v", err)
			}
			value = buf.Bytes()
		}
		if int64(len(value)) > lim.MaxValueBytes {
			return errf(protocol.CodeQuota, "value is %d bytes, the limit is %d", len(value), lim.MaxValueBytes)
		}
		now := s.nowMs()
		it := StoreItem{Key: key, Value: value}
		if req.TtlS != nil {
			if *req.TtlS > (math.MaxInt64-now)/1000 {
				// now + ttlS·1000 would wrap to the past: a write that keeps nothing.
				return errf(protocol.CodeBadRequest, "ttlS: %d seconds is past the end of time the server can count", *req.TtlS)
			}
			it.ExpiresAt = now + *req.TtlS*1000
		}
		v, err := s.st.StorePut(r.Context(), ns, it, ifMatch, StoreQuota{StoreLimits: lim, Device: s.cfg.DeviceStore}, now)
		var qe *QuotaError
		switch {
		case errors.Is(err, ErrConflict):
			if *ifMatch == 0 {
				return errf(protocol.CodeConflict, "%q already exists (If-Match: 0)", key)
			}
			return errf(protocol.CodeConflict, "%q is not at version %d", key, *ifMatch)
		case errors.As(err, &qe):
			if !strings.Contains(qe.Limit, "per device") {
				return errf(protocol.CodeQuota, "the store is full: %s per plugin", qe.Limit)
			}
			return errf(protocol.CodeQuota, "the store is full: %s", qe.Limit)
		case err != nil:
			return err
		}
		w.Header().Set("ETag", etag(v))
		writeJSON(w, http.StatusOK, protocol.StorePutResponse{Version: v})
		return nil
	}
}

func (s *Server) deleteStore(raw string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		ns, err := s.storeNS(w, r)
		if err != nil {
			return err
		}
		key, err := decodeStoreKey(raw)
		if err != nil {
			return err
		}
		if err := s.st.StoreDelete(r.Context(), ns, key, s.nowMs()); errors.Is(err, ErrNotFound) {
			return errf(protocol.CodeNotFound, "no value at %q", key)
		} else if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, okBody)
		return nil
	}
}
