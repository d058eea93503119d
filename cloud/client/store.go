package client

import (
	"context"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/pkuinfo/harness/cloud/protocol"
)

// InfoStore is the HKDF info prefix of end-to-end store keys: key = HKDF-SHA-256(StoreSecret,
// salt = none, info = InfoStore + plugin). A client-side choice; the server never sees it.
const InfoStore = "pku-harness-cloud/v1/store\n"

// Store is a plugin's key-value store (seed 003 “# 存储”; namespace (device, plugin) taken from
// the token). With end-to-end encryption every value leaves the device as an Envelope whose
// plaintext is {"k": key, "v": value}: the key inside stops a server from answering one key's
// read with another key's value. (A server can still replay an older value of the same key;
// versions are the server's to give.)
type Store struct {
	p   *Plugin
	e2e bool
}

// Store returns the plugin's store; e2e seals every value (the manifest's `cloud.e2e: true`,
// which makes the host refuse plaintext writes).
func (p *Plugin) Store(e2e bool) *Store { return &Store{p: p, e2e: e2e} }

// Item is a stored value: Value is its JSON (decrypted when the store is end-to-end); Version
// is the server's version (≥ 1); ExpiresAt is zero without a TTL.
type Item struct {
	Key       string          // the StoreKey
	Value     json.RawMessage // JSON; decrypted for an end-to-end store
	Version   int64           // ≥ 1, grows with every write
	UpdatedAt time.Time       // server time of the last write (ms precision)
	ExpiresAt time.Time       // zero without a TTL
}

// ListItem is one key of List, without its value.
type ListItem struct {
	Key       string    // the StoreKey
	Version   int64     // ≥ 1
	UpdatedAt time.Time // server time of the last write
}

// PutOptions are Put's options. IfVersion, when set, makes the write conditional (If-Match):
// it fails with a `conflict` error unless the stored version equals *IfVersion; 0 means the key
// must not exist yet. TTL, when positive, is the value's lifetime (rounded up to seconds).
type PutOptions struct {
	IfVersion *int64        // nil: unconditional; 0: create only; n: only over version n
	TTL       time.Duration // 0: no expiry
}

// IfVersion is a helper for PutOptions.IfVersion.
func IfVersion(v int64) *int64 { return &v }

type sealedValue struct {
	K string          `json:"k"`
	V json.RawMessage `json:"v"`
}

func (s *Store) key(ctx context.Context) ([]byte, error) {
	dev, err := s.p.c.Device(ctx)
	if err != nil {
		return nil, err
	}
	// hkdf.Key fails only for lengths above 8,160 bytes.
	return hkdf.Key(sha256.New, dev.StoreSecret[:], nil, InfoStore+s.p.id, protocol.KeySize)
}

// storePath checks key (StoreKey, no "." or ".." segment) and escapes it segment by segment.
func storePath(key string) (string, error) {
	if err := protocol.CheckStoreKey(key); err != nil {
		return "", fmt.Errorf("cloud store: %w", err)
	}
	segs := strings.Split(key, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return "/v1/store/" + strings.Join(segs, "/"), nil
}

// Get reads key. A key that does not exist (or expired) is nil, nil.
func (s *Store) Get(ctx context.Context, key string) (*Item, error) {
	path, err := storePath(key)
	if err != nil {
		return nil, err
	}
	var resp protocol.StoreGetResponse
	if err := s.p.do(ctx, http.MethodGet, path, nil, nil, &resp); err != nil {
		if IsCode(err, protocol.CodeNotFound) {
			return nil, nil
		}
		return nil, err
	}
	it := &Item{Key: resp.Key, Value: resp.Value, Version: resp.Version, UpdatedAt: time.UnixMilli(resp.UpdatedAt)}
	if resp.ExpiresAt != nil {
		it.ExpiresAt = time.UnixMilli(*resp.ExpiresAt)
	}
	if resp.Key != key {
		return nil, fmt.Errorf("cloud store: GET %s: the server answered for key %q", key, resp.Key)
	}
	if s.e2e {
		v, err := s.open(ctx, key, resp.Value)
		if err != nil {
			return nil, fmt.Errorf("cloud store: GET %s: %w", key, err)
		}
		it.Value = v
	}
	return it, nil
}

func (s *Store) open(ctx context.Context, key string, raw json.RawMessage) (json.RawMessage, error) {
	k, err := s.key(ctx)
	if err != nil {
		return nil, err
	}
	var env protocol.Envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, errors.New("the stored value is not an envelope (written without end-to-end encryption?)")
	}
	var sv sealedValue
	if err := protocol.Open(k, &env, &sv); err != nil {
		return nil, err
	}
	if sv.K != key {
		return nil, fmt.Errorf("the envelope was sealed for key %q", sv.K)
	}
	return sv.V, nil
}

// GetJSON reads key into v and returns its version; a missing key leaves v alone and returns 0.
func (s *Store) GetJSON(ctx context.Context, key string, v any) (int64, error) {
	it, err := s.Get(ctx, key)
	if err != nil || it == nil {
		return 0, err
	}
	if err := json.Unmarshal(it.Value, v); err != nil {
		return 0, fmt.Errorf("cloud store: %s: %w", key, err)
	}
	return it.Version, nil
}

// Put writes value (any JSON-marshallable value) under key and returns the new version.
func (s *Store) Put(ctx context.Context, key string, value any, opts PutOptions) (int64, error) {
	path, err := storePath(key)
	if err != nil {
		return 0, err
	}
	raw, err := json.Marshal(value)
	if err != nil {
		return 0, fmt.Errorf("cloud store: PUT %s: %w", key, err)
	}
	if s.e2e {
		k, err := s.key(ctx)
		if err != nil {
			return 0, err
		}
		env, err := protocol.Seal(k, sealedValue{K: key, V: raw})
		if err != nil {
			return 0, fmt.Errorf("cloud store: PUT %s: %w", key, err)
		}
		if raw, err = json.Marshal(env); err != nil {
			return 0, err
		}
	}
	req := protocol.StorePutRequest{Value: raw}
	if opts.TTL > 0 {
		ttl := int64((opts.TTL + time.Second - 1) / time.Second)
		req.TtlS = &ttl
	}
	var h http.Header
	if opts.IfVersion != nil {
		if *opts.IfVersion < 0 {
			return 0, fmt.Errorf("cloud store: PUT %s: IfVersion %d is negative", key, *opts.IfVersion)
		}
		h = http.Header{"If-Match": {strconv.FormatInt(*opts.IfVersion, 10)}}
	}
	var resp protocol.StorePutResponse
	if err := s.p.do(ctx, http.MethodPut, path, h, &req, &resp); err != nil {
		return 0, err
	}
	return resp.Version, nil
}

// Delete removes key; deleting a missing key is not an error.
func (s *Store) Delete(ctx context.Context, key string) error {
	path, err := storePath(key)
	if err != nil {
		return err
	}
	err = s.p.do(ctx, http.MethodDelete, path, nil, nil, nil)
	if IsCode(err, protocol.CodeNotFound) {
		return nil
	}
	return err
}

// List returns every key starting with prefix, following the server's cursor from page to page.
func (s *Store) List(ctx context.Context, prefix string) ([]ListItem, error) {
	if !protocol.ValidStorePrefix(prefix) {
		return nil, fmt.Errorf("cloud store: list prefix %q: characters outside StoreKey", prefix)
	}
	var out []ListItem
	cursor := ""
	for page := 0; ; page++ {
		q := url.Values{}
		if prefix != "" {
			q.Set("prefix", prefix)
		}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		path := "/v1/store"
		if len(q) > 0 {
			path += "?" + q.Encode()
		}
		var resp protocol.StoreListResponse
		if err := s.p.do(ctx, http.MethodGet, path, nil, nil, &resp); err != nil {
			return nil, err
		}
		for _, it := range resp.Items {
			out = append(out, ListItem{Key: it.Key, Version: it.Version, UpdatedAt: time.UnixMilli(it.UpdatedAt)})
		}
		if resp.Cursor == "" || resp.Cursor == cursor || page > 10000 {
			return out, nil
		}
		cursor = resp.Cursor
	}
}
