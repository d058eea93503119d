package agent

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/store"
)

func init() {
	store.Register(store.Migration{Version: 400, Name: "agent conversations", SQL: `
CREATE TABLE agent_conversations (
	id            TEXT PRIMARY KEY,
	title         TEXT NOT NULL,
	created_at    INTEGER NOT NULL, -- Unix ms
	updated_at    INTEGER NOT NULL,
	loaded        TEXT NOT NULL DEFAULT '[]', -- plugins whose onDemand tools plugins__use loaded
	input_tokens  INTEGER NOT NULL DEFAULT 0,
	output_tokens INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE agent_messages (
	conv         TEXT NOT NULL REFERENCES agent_conversations(id) ON DELETE CASCADE,
	seq          INTEGER NOT NULL,
	role         TEXT NOT NULL,
	content      TEXT NOT NULL,
	reasoning    TEXT NOT NULL DEFAULT '',
	tool_calls   TEXT NOT NULL DEFAULT '', -- JSON [{id,name,arguments}] of an assistant message
	tool_call_id TEXT NOT NULL DEFAULT '',
	tool         TEXT NOT NULL DEFAULT '', -- a tool message's tool (model name)
	untrusted    INTEGER NOT NULL DEFAULT 0,
	failed       INTEGER NOT NULL DEFAULT 0,
	at           INTEGER NOT NULL,
	PRIMARY KEY (conv, seq)
);
CREATE TABLE agent_confirmations (
	conv     TEXT NOT NULL REFERENCES agent_conversations(id) ON DELETE CASCADE,
	id       TEXT NOT NULL,
	call_id  TEXT NOT NULL,
	tool     TEXT NOT NULL,
	input    TEXT NOT NULL,
	reason   TEXT NOT NULL,
	outcome  TEXT NOT NULL, -- approved, denied, expired, cancelled
	asked_at INTEGER NOT NULL,
	answered_at INTEGER NOT NULL,
	PRIMARY KEY (conv, id)
);
CREATE TABLE agent_turns (
	conv          TEXT NOT NULL REFERENCES agent_conversations(id) ON DELETE CASCADE,
	id            TEXT NOT NULL,
	started_at    INTEGER NOT NULL,
	ended_at      INTEGER NOT NULL,
	rounds        INTEGER NOT NULL,
	input_tokens  INTEGER NOT NULL,
	output_tokens INTEGER NOT NULL,
	stop          TEXT NOT NULL, -- done, step_limit, token_budget, length, cancelled, error
	PRIMARY KEY (conv, id)
);
CREATE INDEX agent_conversations_updated ON agent_conversations (updated_at DESC);
`})
	// A tool message that was the person's private data (host.CallResult.Private):
	// a later turn of the conversation holds it, as it holds untrusted ones.
	store.Register(store.Migration{Version: 401, Name: "agent private results", SQL: `
ALTER TABLE agent_messages ADD COLUMN private INTEGER NOT NULL DEFAULT 0;
`})
	// Why a confirmation was asked, as a code (host.WhyAsk, …): a reopened conversation words
	// it in the page's language as the live card did. Older rows have ''.
	store.Register(store.Migration{Version: 402, Name: "agent confirmation why", SQL: `
ALTER TABLE agent_confirmations ADD COLUMN why TEXT NOT NULL DEFAULT '';
`})
}

// Conversation is one stored conversation (docs/HOST-API.md "Conversations (the assistant)"):
// its id, title (the first message, cut), times, the plugins whose
// onDemand tools were loaded, and the tokens used so far.
type Conversation struct {
	ID      string    `json:"id"`
	Title   string    `json:"title"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	Loaded  []string  `json:"loaded"`
	Usage   Usage     `json:"usage"`
	// Messages are filled by Get, not by List.
	Messages []StoredMessage `json:"messages,omitempty"`
	// Confirmations are the questions asked and how they were answered
	// (Get only).
	Confirmations []StoredConfirmation `json:"confirmations,omitempty"`
}

// StoredMessage is a Message as kept: its place in the conversation, the
// tool a tool message answers, and whether it was untrusted data or an
// error.
type StoredMessage struct {
	Seq int `json:"seq"`
	Message
	Tool      string `json:"tool,omitempty"`
	Untrusted bool   `json:"untrusted,omitempty"`
	// Private marks a tool message that was the person's private data.
	Private bool      `json:"private,omitempty"`
	Failed  bool      `json:"failed,omitempty"`
	At      time.Time `json:"at"`
}

// StoredConfirmation is one confirmation a turn asked and its outcome
// ("approved", "denied", "expired" or "cancelled"). Why is the reason as a
// code (host.WhyAsk, host.WhyUntrusted, host.WhyThirdParty; "" in rows from
// before migration 402).
type StoredConfirmation struct {
	ID       string          `json:"id"`
	CallID   string          `json:"callId"`
	Tool     string          `json:"tool"`
	Input    json.RawMessage `json:"input"`
	Reason   string          `json:"reason"`
	Why      string          `json:"why,omitempty"`
	Outcome  string          `json:"outcome"`
	Asked    time.Time       `json:"asked"`
	Answered time.Time       `json:"answered"`
}

// Conversations keeps conversations in the host database (migration 400).
type Conversations struct {
	db  *sql.DB
	now func() time.Time
}

// NewConversations returns the conversation store on db; now is the clock
// (nil: time.Now).
func NewConversations(db *store.DB, now func() time.Time) *Conversations {
	if now == nil {
		now = time.Now
	}
	return &Conversations{db: db.SQL, now: now}
}

// Create starts a conversation titled title (cut at 60 characters; empty
// becomes "新对话").
func (s *Conversations) Create(ctx context.Context, title string) (*Conversation, error) {
	title = strings.TrimSpace(title)
	if r := []rune(title); len(r) > 60 {
		title = string(r[:60]) + "…"
	}
	if title == "" {
		title = "新对话"
	}
	now := s.now()
	c := &Conversation{ID: newID(), Title: title, Created: now, Updated: now, Loaded: []string{}}
	_, err := s.db.ExecContext(ctx, `INSERT INTO agent_conversations (id, title, created_at, updated_at) VALUES (?, ?, ?, ?)`,
		c.ID, c.Title, now.UnixMilli(), now.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("agent: new conversation: %w", err)
	}
	return c, nil
}

// List returns the conversations, most recently updated first, at most
// limit (≤ 0: 100).
func (s *Conversations) List(ctx context.Context, limit int) ([]*Conversation, error) {
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, title, created_at, updated_at, loaded, input_tokens, output_tokens
		FROM agent_conversations ORDER BY updated_at DESC, id LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("agent: conversations: %w", err)
	}
	defer rows.Close()
	out := []*Conversation{}
	for rows.Next() {
		c, err := scanConv(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

type scanner interface{ Scan(dest ...any) error }

func scanConv(r scanner) (*Conversation, error) {
	var c Conversation
	var created, updated int64
	var loaded string
	if err := r.Scan(&c.ID, &c.Title, &created, &updated, &loaded, &c.Usage.Input, &c.Usage.Output); err != nil {
		return nil, err
	}
	c.Created, c.Updated = time.UnixMilli(created), time.UnixMilli(updated)
	if err := json.Unmarshal([]byte(loaded), &c.Loaded); err != nil || c.Loaded == nil {
		c.Loaded = []string{}
	}
	return &c, nil
}

// Get returns a conversation with its messages and confirmations; an
// unknown id is *host.NotFound.
func (s *Conversations) Get(ctx context.Context, id string) (*Conversation, error) {
	c, err := s.head(ctx, id)
	if err != nil {
		return nil, err
	}
	if c.Messages, err = s.Messages(ctx, id); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, call_id, tool, input, reason, why, outcome, asked_at, answered_at
		FROM agent_confirmations WHERE conv = ? ORDER BY asked_at, rowid`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var sc StoredConfirmation
		var in string
		var asked, answered int64
		if err := rows.Scan(&sc.ID, &sc.CallID, &sc.Tool, &in, &sc.Reason, &sc.Why, &sc.Outcome, &asked, &answered); err != nil {
			return nil, err
		}
		sc.Input, sc.Asked, sc.Answered = json.RawMessage(in), time.UnixMilli(asked), time.UnixMilli(answered)
		c.Confirmations = append(c.Confirmations, sc)
	}
	return c, rows.Err()
}

func (s *Conversations) head(ctx context.Context, id string) (*Conversation, error) {
	c, err := scanConv(s.db.QueryRowContext(ctx, `SELECT id, title, created_at, updated_at, loaded, input_tokens, output_tokens
		FROM agent_conversations WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &host.NotFound{What: fmt.Sprintf("no conversation %q", id)}
	}
	if err != nil {
		return nil, fmt.Errorf("agent: conversation %s: %w", id, err)
	}
	return c, nil
}

// Messages returns a conversation's messages in order.
func (s *Conversations) Messages(ctx context.Context, id string) ([]StoredMessage, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT seq, role, content, reasoning, tool_calls, tool_call_id, tool, untrusted, private, failed, at
		FROM agent_messages WHERE conv = ? ORDER BY seq`, id)
	if err != nil {
		return nil, fmt.Errorf("agent: messages of %s: %w", id, err)
	}
	defer rows.Close()
	out := []StoredMessage{}
	for rows.Next() {
		var m StoredMessage
		var calls string
		var at int64
		if err := rows.Scan(&m.Seq, &m.Role, &m.Content, &m.Reasoning, &calls, &m.ToolCallID, &m.Tool, &m.Untrusted, &m.Private, &m.Failed, &at); err != nil {
			return nil, err
		}
		if calls != "" {
			if err := json.Unmarshal([]byte(calls), &m.ToolCalls); err != nil {
				return nil, fmt.Errorf("agent: message %s/%d: %w", id, m.Seq, err)
			}
		}
		m.At = time.UnixMilli(at)
		out = append(out, m)
	}
	return out, rows.Err()
}

// Delete removes a conversation and everything kept with it; an unknown
// id is *host.NotFound.
func (s *Conversations) Delete(ctx context.Context, id string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM agent_conversations WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("agent: delete conversation %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return &host.NotFound{What: fmt.Sprintf("no conversation %q", id)}
	}
	return nil
}

// append stores m as the next message of conversation id.
func (s *Conversations) append(ctx context.Context, id string, m StoredMessage) error {
	var calls string
	if len(m.ToolCalls) > 0 {
		b, _ := json.Marshal(m.ToolCalls)
		calls = string(b)
	}
	now := s.now().UnixMilli()
	_, err := s.db.ExecContext(ctx, `INSERT INTO agent_messages (conv, seq, role, content, reasoning, tool_calls, tool_call_id, tool, untrusted, private, failed, at)
		VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM agent_messages WHERE conv = ?), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		id, id, string(m.Role), m.Content, m.Reasoning, calls, m.ToolCallID, m.Tool, m.Untrusted, m.Private, m.Failed, now)
	if err != nil {
		return fmt.Errorf("agent: store message: %w", err)
	}
	_, err = s.db.ExecContext(ctx, `UPDATE agent_conversations SET updated_at = ? WHERE id = ?`, now, id)
	return err
}

// setLoaded records the plugins whose onDemand tools are loaded.
func (s *Conversations) setLoaded(ctx context.Context, id string, loaded []string) error {
	b, _ := json.Marshal(loaded)
	_, err := s.db.ExecContext(ctx, `UPDATE agent_conversations SET loaded = ? WHERE id = ?`, string(b), id)
	return err
}

// confirmation records a confirmation and its outcome.
func (s *Conversations) confirmation(ctx context.Context, conv string, c StoredConfirmation) error {
	_, err := s.db.ExecContext(ctx, `INSERT OR REPLACE INTO agent_confirmations (conv, id, call_id, tool, input, reason, why, outcome, asked_at, answered_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, conv, c.ID, c.CallID, c.Tool, string(c.Input), c.Reason, c.Why, c.Outcome,
		c.Asked.UnixMilli(), c.Answered.UnixMilli())
	return err
}

// turn records a finished turn and adds its tokens to the conversation.
func (s *Conversations) turn(ctx context.Context, conv, id string, started time.Time, rounds int, u Usage, stop string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO agent_turns (conv, id, started_at, ended_at, rounds, input_tokens, output_tokens, stop)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, conv, id, started.UnixMilli(), s.now().UnixMilli(), rounds, u.Input, u.Output, stop); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE agent_conversations SET input_tokens = input_tokens + ?, output_tokens = output_tokens + ? WHERE id = ?`,
		u.Input, u.Output, conv); err != nil {
		return err
	}
	return tx.Commit()
}
