package agent

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/pkuinfo/harness/host"
)

// Preparer is implemented by a Person that must know a confirmation's or
// question's id before the event is emitted (so that an answer arriving
// at once is not lost): the turn calls Prepare, then emits, then asks.
type Preparer interface {
	Prepare(ev *Event)
}

// Waiter is a Person whose answers come from elsewhere (the API's POST
// routes): Confirm and Answer wait until Approve or Respond is called with
// the event's id, the wait expires (host.ConfirmationTTL), or ctx ends.
// It is safe for concurrent use; one Waiter serves every conversation.
type Waiter struct {
	mu      sync.Mutex
	pending map[string]*waiting
	// TTL is how long an answer is waited for (0: host.ConfirmationTTL).
	TTL time.Duration
}

type waiting struct {
	conv   string
	kind   string // "confirmation" or "question"
	answer chan waiterAnswer
}

type waiterAnswer struct {
	approve bool
	fields  map[string]any
}

// ForConversation returns the Person for conversation conv's turns.
func (w *Waiter) ForConversation(conv string) Person { return &convWaiter{w: w, conv: conv} }

type convWaiter struct {
	w        *Waiter
	conv     string
	prepared map[string]*waiting // by event id; the turn's goroutine only
}

func (c *convWaiter) Prepare(ev *Event) {
	wt := &waiting{conv: c.conv, kind: ev.Type, answer: make(chan waiterAnswer, 1)}
	if c.prepared == nil {
		c.prepared = map[string]*waiting{}
	}
	c.prepared[ev.ID] = wt
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	if c.w.pending == nil {
		c.w.pending = map[string]*waiting{}
	}
	c.w.pending[ev.ID] = wt
}

func (c *convWaiter) wait(ctx context.Context, ev *Event) (waiterAnswer, error) {
	wt := c.prepared[ev.ID]
	delete(c.prepared, ev.ID)
	defer func() {
		c.w.mu.Lock()
		delete(c.w.pending, ev.ID)
		c.w.mu.Unlock()
	}()
	if wt == nil {
		return waiterAnswer{}, fmt.Errorf("agent: %s %s was not prepared", ev.Type, ev.ID)
	}
	ttl := c.w.TTL
	if ttl <= 0 {
		ttl = host.ConfirmationTTL
	}
	timer := time.NewTimer(ttl)
	defer timer.Stop()
	select {
	case a := <-wt.answer:
		return a, nil
	case <-timer.C:
		return waiterAnswer{}, fmt.Errorf("agent: nobody answered %s %s within %s", ev.Type, ev.ID, ttl)
	case <-ctx.Done():
		return waiterAnswer{}, ctx.Err()
	}
}

func (c *convWaiter) Confirm(ctx context.Context, ev *Event) (bool, error) {
	a, err := c.wait(ctx, ev)
	return a.approve, err
}

func (c *convWaiter) Answer(ctx context.Context, ev *Event) (map[string]any, error) {
	a, err := c.wait(ctx, ev)
	return a.fields, err
}

// Approve answers the confirmation id of conversation conv; it is
// *host.NotFound when no turn of conv waits for it.
func (w *Waiter) Approve(conv, id string, approve bool) error {
	return w.give(conv, id, "confirmation", waiterAnswer{approve: approve})
}

// Respond answers the question id of conversation conv with fields (nil
// declines); it is *host.NotFound when no turn of conv waits for it.
func (w *Waiter) Respond(conv, id string, fields map[string]any) error {
	return w.give(conv, id, "question", waiterAnswer{fields: fields})
}

func (w *Waiter) give(conv, id, kind string, a waiterAnswer) error {
	w.mu.Lock()
	wt := w.pending[id]
	if wt != nil && wt.conv == conv && wt.kind == kind {
		delete(w.pending, id)
	} else {
		wt = nil
	}
	w.mu.Unlock()
	if wt == nil {
		return &host.NotFound{What: fmt.Sprintf("no %s %q is waiting in conversation %s", kind, id, conv)}
	}
	wt.answer <- a
	return nil
}
