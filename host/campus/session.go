package campus

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/pkuinfo/harness/host/store"
	"github.com/pkuinfo/harness/host/vault"
)

// Session is what the host holds for one campus service after sign-in: a
// bearer token (a JWT for treehole and card), cookies, or both. A plugin
// never sees any of it.
type Session struct {
	// Service is the campus service name, e.g. "treehole".
	Service string `json:"service"`
	// Token is the service's bearer token ("" when the service signs with
	// cookies only).
	Token string `json:"token,omitempty"`
	// Cookies maps cookie names to values, sent as one Cookie header.
	Cookies map[string]string `json:"cookies,omitempty"`
	// Device is a stable device identifier where the service wants one: the
	// 12-hex tail of Treehole's uuid header (docs/CAMPUS-PROTOCOLS.md §5.1, §5.2).
	// The client creates it on first use and keeps it.
	Device string `json:"device,omitempty"`
	// Created is when the session was stored; Expires when the service
	// said it ends (zero when unknown).
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires,omitzero"`

	// unopened is set on a stored session whose sealed part does not open
	// with the data directory's key: the key was lost or replaced (the
	// vault then made a new one), or the row was damaged. It holds no
	// token or cookies and reads as not signed in.
	unopened bool
}

// CookieHeader returns the cookies as a Cookie header value, names sorted,
// or "" when there are none.
func (s *Session) CookieHeader() string {
	names := make([]string, 0, len(s.Cookies))
	for n := range s.Cookies {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + s.Cookies[n]
	}
	return strings.Join(parts, "; ")
}

// ParseCookies reads a Cookie header value ("a=1; b=2"), as a user copies
// it from a browser, into a map. It fails on a pair without "=" or with an
// empty name, naming the pair.
func ParseCookies(header string) (map[string]string, error) {
	out := map[string]string{}
	for _, part := range strings.Split(header, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, value, ok := strings.Cut(part, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("cookie %q: want NAME=VALUE", part)
		}
		out[name] = strings.TrimSpace(value)
	}
	if len(out) == 0 {
		return nil, errors.New("no cookies given")
	}
	return out, nil
}

// Sessions stores one Session per campus service. Implementations are safe
// for concurrent use. Get returns ok false when there is no session.
type Sessions interface {
	Get(ctx context.Context, service string) (s *Session, ok bool, err error)
	Put(ctx context.Context, s *Session) error
	Delete(ctx context.Context, service string) error
	// List returns every stored session, by service name.
	List(ctx context.Context) ([]*Session, error)
}

// MemorySessions is a Sessions in memory, for tests.
type MemorySessions struct {
	mu sync.Mutex
	m  map[string]Session
}

// Get implements Sessions.
func (m *MemorySessions) Get(_ context.Context, service string) (*Session, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.m[service]
	if !ok {
		return nil, false, nil
	}
	return cloneSession(&s), true, nil
}

// Put implements Sessions.
func (m *MemorySessions) Put(_ context.Context, s *Session) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[string]Session{}
	}
	m.m[s.Service] = *cloneSession(s)
	return nil
}

// Delete implements Sessions.
func (m *MemorySessions) Delete(_ context.Context, service string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.m, service)
	return nil
}

// List implements Sessions.
func (m *MemorySessions) List(_ context.Context) ([]*Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*Session
	for _, s := range m.m {
		out = append(out, cloneSession(&s))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Service < out[j].Service })
	return out, nil
}

func cloneSession(s *Session) *Session {
	c := *s
	if s.Cookies != nil {
		c.Cookies = make(map[string]string, len(s.Cookies))
		for k, v := range s.Cookies {
			c.Cookies[k] = v
		}
	}
	return &c
}

func init() {
	store.Register(store.Migration{Version: 200, Name: "campus sessions", SQL: `
CREATE TABLE campus_sessions (
	service    TEXT    PRIMARY KEY,
	token      TEXT    NOT NULL DEFAULT '',
	cookies    TEXT    NOT NULL DEFAULT '{}', -- JSON object name → value
	device     TEXT    NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL,              -- Unix ms
	expires_at INTEGER NOT NULL DEFAULT 0     -- Unix ms, 0 when unknown
);`})
}

func init() {
	store.Register(store.Migration{Version: 210, Name: "campus sessions sealed", SQL: `
ALTER TABLE campus_sessions ADD COLUMN sealed BLOB; -- vault-sealed JSON {token, cookies}; token and cookies then empty`})
}

func init() {
	store.Register(store.Migration{Version: 213, Name: "campus sessions renewed", SQL: `
ALTER TABLE campus_sessions ADD COLUMN renewed_at INTEGER NOT NULL DEFAULT 0; -- Unix ms of the last silent renewal (Signer.Renew), 0 when none`})
}

// claimRenewal records a silent renewal of service at now unless one was
// recorded less than every ago, in any process on the database; ok is
// false with the time of that one when it was. A service without a row
// is not claimed (ok false, last zero).
func (q *SQLSessions) claimRenewal(ctx context.Context, service string, now time.Time, every time.Duration) (last time.Time, ok bool, err error) {
	res, err := q.DB.ExecContext(ctx, `UPDATE campus_sessions SET renewed_at = ? WHERE service = ? AND renewed_at <= ?`,
		now.UnixMilli(), service, now.Add(-every).UnixMilli())
	if err != nil {
		return time.Time{}, false, fmt.Errorf("campus: record the renewal of %s: %w", service, err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return time.Time{}, true, nil
	}
	var ms int64
	err = q.DB.QueryRowContext(ctx, `SELECT renewed_at FROM campus_sessions WHERE service = ?`, service).Scan(&ms)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("campus: read the renewal of %s: %w", service, err)
	}
	return time.UnixMilli(ms), false, nil
}

// SQLSessions is a Sessions kept in the host's database (table
// campus_sessions, migrations 200, 210 and 213), shared by CLI commands and a
// running `harness serve`. The token and cookies of a session are sealed
// with the data directory's vault.Box (column sealed, label
// "campus_sessions/SERVICE"); rows written before migration 210 in plain
// text are sealed on first use (MigratePlain).
type SQLSessions struct {
	DB *sql.DB
	// Box seals tokens and cookies; nil means the vault of Dir.
	Box *vault.Box
	// Dir is the data directory whose vault seals the rows.
	Dir string

	once    sync.Once
	openErr error
}

// NewSQLSessions returns the sessions stored in db, sealed with the vault
// of db's data directory (vault.Open with vault.DefaultKeyring).
func NewSQLSessions(db *store.DB) *SQLSessions { return &SQLSessions{DB: db.SQL, Dir: db.Dir()} }

// box opens the vault once and seals any plain rows left from before
// migration 210.
func (q *SQLSessions) box(ctx context.Context) (*vault.Box, error) {
	q.once.Do(func() {
		if q.Box == nil {
			q.Box, q.openErr = vault.Open(q.Dir, vault.DefaultKeyring())
			if q.openErr != nil {
				return
			}
		}
		q.openErr = q.migratePlain(ctx)
	})
	return q.Box, q.openErr
}

// MigratePlain seals every session row that still holds its token or
// cookies in plain text (rows from before migration 210) and blanks the
// plain columns. It is run on first use; calling it again does nothing.
func (q *SQLSessions) MigratePlain(ctx context.Context) error {
	_, err := q.box(ctx)
	return err
}

func (q *SQLSessions) migratePlain(ctx context.Context) error {
	rows, err := q.DB.QueryContext(ctx, `SELECT service, token, cookies FROM campus_sessions WHERE sealed IS NULL AND (token != '' OR cookies != '{}')`)
	if err != nil {
		return fmt.Errorf("campus: seal old sessions: %w", err)
	}
	type plain struct{ service, token, cookies string }
	var todo []plain
	for rows.Next() {
		var p plain
		if err := rows.Scan(&p.service, &p.token, &p.cookies); err != nil {
			rows.Close()
			return fmt.Errorf("campus: seal old sessions: %w", err)
		}
		todo = append(todo, p)
	}
	rows.Close()
	for _, p := range todo {
		var s Session
		s.Token = p.token
		if err := json.Unmarshal([]byte(p.cookies), &s.Cookies); err != nil {
			return fmt.Errorf("campus: seal old session %s: cookies: %w", p.service, err)
		}
		sealed, err := q.seal(p.service, &s)
		if err != nil {
			return err
		}
		if _, err := q.DB.ExecContext(ctx, `UPDATE campus_sessions SET sealed = ?, token = '', cookies = '{}' WHERE service = ?`, sealed, p.service); err != nil {
			return fmt.Errorf("campus: seal old session %s: %w", p.service, err)
		}
	}
	return nil
}

// secretPart is what is sealed of a session.
type secretPart struct {
	Token   string            `json:"t,omitempty"`
	Cookies map[string]string `json:"c,omitempty"`
}

func (q *SQLSessions) seal(service string, s *Session) ([]byte, error) {
	b, err := json.Marshal(secretPart{Token: s.Token, Cookies: s.Cookies})
	if err != nil {
		return nil, err
	}
	return q.Box.Seal("campus_sessions/"+service, b), nil
}

const sessionColumns = `service, token, cookies, device, created_at, expires_at, sealed`

// Get implements Sessions. A row sealed with another key (the key file
// lost or replaced) comes back holding nothing, and a request with it
// fails with NotSignedInError saying so; List leaves such rows out.
func (q *SQLSessions) Get(ctx context.Context, service string) (*Session, bool, error) {
	if _, err := q.box(ctx); err != nil {
		return nil, false, err
	}
	row := q.DB.QueryRowContext(ctx, `SELECT `+sessionColumns+` FROM campus_sessions WHERE service = ?`, service)
	s, err := q.scanSession(row.Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("campus: read session %s: %w", service, err)
	}
	return s, true, nil
}

func (q *SQLSessions) scanSession(scan func(...any) error) (*Session, error) {
	var s Session
	var cookies string
	var created, expires int64
	var sealed []byte
	if err := scan(&s.Service, &s.Token, &cookies, &s.Device, &created, &expires, &sealed); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(cookies), &s.Cookies); err != nil {
		return nil, fmt.Errorf("cookies: %w", err)
	}
	if sealed != nil {
		plain, err := q.Box.Open("campus_sessions/"+s.Service, sealed)
		if errors.Is(err, vault.ErrOpen) {
			// Another key sealed it: not signed in, and the next sign-in replaces it.
			s.Cookies, s.unopened = nil, true
			s.Created = time.UnixMilli(created).UTC()
			return &s, nil
		}
		if err != nil {
			return nil, err
		}
		var p secretPart
		if err := json.Unmarshal(plain, &p); err != nil {
			return nil, fmt.Errorf("sealed part: %w", err)
		}
		s.Token, s.Cookies = p.Token, p.Cookies
	}
	if len(s.Cookies) == 0 {
		s.Cookies = nil
	}
	s.Created = time.UnixMilli(created).UTC()
	if expires != 0 {
		s.Expires = time.UnixMilli(expires).UTC()
	}
	return &s, nil
}

// Put implements Sessions: the token and cookies are sealed.
func (q *SQLSessions) Put(ctx context.Context, s *Session) error {
	if _, err := q.box(ctx); err != nil {
		return err
	}
	sealed, err := q.seal(s.Service, s)
	if err != nil {
		return err
	}
	var expires int64
	if !s.Expires.IsZero() {
		expires = s.Expires.UnixMilli()
	}
	_, err = q.DB.ExecContext(ctx, `INSERT INTO campus_sessions (service, token, cookies, device, created_at, expires_at, sealed)
		VALUES (?, '', '{}', ?, ?, ?, ?)
		ON CONFLICT (service) DO UPDATE SET token = '', cookies = '{}', sealed = excluded.sealed,
			device = excluded.device, created_at = excluded.created_at, expires_at = excluded.expires_at`,
		s.Service, s.Device, s.Created.UnixMilli(), expires, sealed)
	if err != nil {
		return fmt.Errorf("campus: store session %s: %w", s.Service, err)
	}
	return nil
}

// Delete implements Sessions.
func (q *SQLSessions) Delete(ctx context.Context, service string) error {
	if _, err := q.DB.ExecContext(ctx, `DELETE FROM campus_sessions WHERE service = ?`, service); err != nil {
		return fmt.Errorf("campus: delete session %s: %w", service, err)
	}
	return nil
}

// List implements Sessions.
func (q *SQLSessions) List(ctx context.Context) ([]*Session, error) {
	if _, err := q.box(ctx); err != nil {
		return nil, err
	}
	rows, err := q.DB.QueryContext(ctx, `SELECT `+sessionColumns+` FROM campus_sessions ORDER BY service`)
	if err != nil {
		return nil, fmt.Errorf("campus: list sessions: %w", err)
	}
	defer rows.Close()
	var out []*Session
	for rows.Next() {
		s, err := q.scanSession(rows.Scan)
		if err != nil {
			return nil, fmt.Errorf("campus: list sessions: %w", err)
		}
		if !s.unopened {
			out = append(out, s)
		}
	}
	return out, rows.Err()
}

// mergeCookies copies the cookies a reply sets into s and reports whether
// anything changed. A cookie with MaxAge < 0 or an expiry in the past is
// removed.
func mergeCookies(s *Session, set []*http.Cookie, now time.Time) bool {
	changed := false
	for _, c := range set {
		if c.Name == "" {
			continue
		}
		if c.MaxAge < 0 || (!c.Expires.IsZero() && c.Expires.Before(now)) {
			if _, ok := s.Cookies[c.Name]; ok {
				delete(s.Cookies, c.Name)
				changed = true
			}
			continue
		}
		if s.Cookies == nil {
			s.Cookies = map[string]string{}
		}
		if s.Cookies[c.Name] != c.Value {
			s.Cookies[c.Name] = c.Value
			changed = true
		}
	}
	return changed
}
