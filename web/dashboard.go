package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/pkuinfo/harness/genui"
	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/api"
	"github.com/pkuinfo/harness/lang/expr"
)

// MaxCards is how many cards one dashboard event stream follows (the dashboard built-in holds
// at most 40).
const MaxCards = 40

// MinRefresh is the shortest refresh interval the host honours, in the document's units
// (seconds): genui refuses a document with a shorter one (docs/GENUI.md), and the host does not
// trust the check to have run.
const MinRefresh = 60

// eventsHeartbeat is how often a quiet dashboard stream sends a comment line.
const eventsHeartbeat = 15 * time.Second

// Dashboard is the host side of the dashboard's refresh (the host owns refresh:
// refresh intervals honoured, no polling per widget beyond that; docs/HOST-API.md "The web app"). POST /v1/ui/dashboard/events
// is a Server-Sent Events stream for the cards a page shows: the host reads each card's
// document from the board (the dashboard built-in, through Host.Call as the user), and at each
// card's `refresh` interval it refreshes the card's data sources into its cache
// (Host.DataSource with refresh) and sends the page a `refresh` event for the card, which the
// page answers with one POST /v1/ui/draw that the fresh cache serves. A data source two pages
// (or two cards) share runs once per interval. Cards without a refresh interval get no events.
type Dashboard struct {
	Host *host.Host
	// Unit is the length of one second of a document's refresh interval; zero is time.Second.
	// Tests shorten it.
	Unit time.Duration

	mu   sync.Mutex
	last map[string]time.Time // plugin + "\x00" + source → when the host last refreshed it
}

// EventsRequest is the body of POST /v1/ui/dashboard/events: the ids of the cards the page
// shows (dashboard__list), 1 to MaxCards of them, each on the board, none twice.
type EventsRequest struct {
	Cards []string `json:"cards"`
}

// CardRefresh is one card the stream follows, in its `ready` event: the card's id and its
// refresh interval in seconds (0: the card's document has none, so no events come for it).
type CardRefresh struct {
	Card    string `json:"card"`
	Refresh int    `json:"refresh"`
}

// SourceState is one data source the host refreshed for a card's `refresh` event: when its
// value was fetched, and whether the refresh failed (Stale, Error: the cache kept its last good
// value) or found nothing to keep (Error alone).
type SourceState struct {
	Plugin    string    `json:"plugin"`
	Source    string    `json:"source"`
	FetchedAt time.Time `json:"fetchedAt,omitzero"`
	Stale     bool      `json:"stale,omitempty"`
	Error     string    `json:"error,omitempty"`
}

// DashboardEvent is one event of the stream: Type "ready" once, with Cards; then "refresh"
// with Card (draw it again) and the Sources the host refreshed for it.
type DashboardEvent struct {
	Type    string        `json:"type"`
	Cards   []CardRefresh `json:"cards,omitempty"`
	Card    string        `json:"card,omitempty"`
	At      time.Time     `json:"at,omitzero"`
	Sources []SourceState `json:"sources,omitempty"`
}

// follow is one card of a stream: its interval, the data sources its document binds, when it
// is due next.
type follow struct {
	id       string
	plugin   string
	every    time.Duration
	secs     int
	sources  []string
	next     time.Time
	position int
}

func (d *Dashboard) unit() time.Duration {
	if d.Unit > 0 {
		return d.Unit
	}
	return time.Second
}

func (d *Dashboard) route(srv *api.Server) {
	srv.HandleStream("POST /v1/ui/dashboard/events", d.events)
}

func (d *Dashboard) events(w http.ResponseWriter, r *http.Request) error {
	var req EventsRequest
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		if errors.Is(err, io.EOF) {
			return bad(`send {"cards": ["ID", …]}, the ids of the cards the page shows`)
		}
		return bad("the body: %v", err)
	}
	if dec.More() {
		return bad("the body: more than one JSON value")
	}
	cards, err := d.plan(r.Context(), req)
	if err != nil {
		return err
	}
	rc := http.NewResponseController(w)
	// The stream lasts as long as the page: lift serve's write timeout for it.
	_ = rc.SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(ev DashboardEvent) error {
		b, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.Type, b); err != nil {
			return err
		}
		return rc.Flush()
	}
	ready := DashboardEvent{Type: "ready", Cards: []CardRefresh{}}
	for _, c := range cards {
		ready.Cards = append(ready.Cards, CardRefresh{Card: c.id, Refresh: c.secs})
	}
	if err := send(ready); err != nil {
		return nil
	}
	var due []*follow
	for _, c := range cards {
		if c.every > 0 {
			c.next = d.Host.Now().Add(c.every)
			due = append(due, c)
		}
	}
	beat := time.NewTicker(eventsHeartbeat)
	defer beat.Stop()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		var wait <-chan time.Time
		if len(due) > 0 {
			sort.Slice(due, func(i, j int) bool {
				if !due[i].next.Equal(due[j].next) {
					return due[i].next.Before(due[j].next)
				}
				return due[i].position < due[j].position
			})
			timer.Reset(max(0, due[0].next.Sub(d.Host.Now())))
			wait = timer.C
		}
		select {
		case <-r.Context().Done():
			return nil
		case <-beat.C:
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil || rc.Flush() != nil {
				return nil
			}
		case <-wait:
			c := due[0]
			ev := DashboardEvent{Type: "refresh", Card: c.id, Sources: d.refresh(r.Context(), c)}
			ev.At = d.Host.Now().UTC()
			if r.Context().Err() != nil || send(ev) != nil {
				return nil
			}
			// The next refresh counts from this one's end, so a slow source never piles up.
			c.next = d.Host.Now().Add(c.every)
		}
	}
}

// refresh refreshes c's data sources into the host's cache, each at most once per c's
// interval however many cards and pages share it.
func (d *Dashboard) refresh(ctx context.Context, c *follow) []SourceState {
	var out []SourceState
	for _, s := range c.sources {
		key := c.plugin + "\x00" + s
		now := d.Host.Now()
		d.mu.Lock()
		if d.last == nil {
			d.last = map[string]time.Time{}
		}
		// A tenth of the interval of slack: two cards due a moment apart share one run.
		fresh := now.Sub(d.last[key]) < c.every-c.every/10
		if !fresh {
			d.last[key] = now
		}
		d.mu.Unlock()
		st := SourceState{Plugin: c.plugin, Source: s}
		dv, err := d.Host.DataSource(ctx, c.plugin, s, !fresh)
		if err != nil {
			st.Error = err.Error()
		} else {
			st.FetchedAt, st.Stale, st.Error = dv.FetchedAt, dv.Stale, dv.Error
		}
		out = append(out, st)
	}
	return out
}

// boardCard is one card of the dashboard built-in's board, as dashboard__list returns it.
type boardCard struct {
	ID       string          `json:"id"`
	Widget   string          `json:"widget"`
	Document json.RawMessage `json:"document"`
	Tool     string          `json:"tool"`
}

// plan reads the board and each requested card's document: its refresh interval and data
// sources. A card that is not on the board is the request's error.
func (d *Dashboard) plan(ctx context.Context, req EventsRequest) ([]*follow, error) {
	if len(req.Cards) == 0 {
		return nil, bad(`send {"cards": ["ID", …]}, the ids of the cards the page shows`)
	}
	if len(req.Cards) > MaxCards {
		return nil, bad("%d cards; a stream follows at most %d", len(req.Cards), MaxCards)
	}
	res, err := d.Host.Call(ctx, host.CallRequest{Actor: host.ActorUser, Plugin: "dashboard", Tool: "list", Input: expr.NewObject(0)})
	if err != nil {
		return nil, err
	}
	b, err := expr.ToJSON(res.Value, "")
	if err != nil {
		return nil, fmt.Errorf("web: the board: %w", err)
	}
	var board struct {
		Widgets []boardCard `json:"widgets"`
	}
	if err := json.Unmarshal(b, &board); err != nil {
		return nil, fmt.Errorf("web: the board: %w", err)
	}
	var out []*follow
	for i, id := range req.Cards {
		if slices.Contains(req.Cards[:i], id) {
			return nil, bad("cards[%d]: card %q is named twice", i, id)
		}
		j := slices.IndexFunc(board.Widgets, func(c boardCard) bool { return c.ID == id })
		if j < 0 {
			return nil, bad("cards[%d]: there is no card %q on the dashboard", i, id)
		}
		c := board.Widgets[j]
		f := &follow{id: id, position: i}
		var doc []byte
		switch {
		case c.Widget != "":
			pid, name, ok := host.SplitToolName(c.Widget)
			if !ok {
				continue // a card the board can no longer draw; its draw says why
			}
			p, err := d.Host.Plugin(ctx, pid)
			if err != nil {
				continue
			}
			for _, ref := range p.Manifest.Widgets {
				if ref.Name == name {
					doc = p.Files[ref.File]
				}
			}
			f.plugin = pid
		default:
			doc = c.Document
			var s string
			if json.Unmarshal(doc, &s) == nil { // a document kept as JSON text
				doc = []byte(s)
			}
		}
		var dd struct {
			Refresh string `json:"refresh"`
			Data    map[string]struct {
				Source string `json:"source"`
			} `json:"data"`
		}
		if doc != nil && json.Unmarshal(doc, &dd) == nil {
			if secs := genui.RefreshSeconds(dd.Refresh); secs > 0 {
				f.secs = max(secs, MinRefresh)
				f.every = time.Duration(f.secs) * d.unit()
			}
			if f.plugin != "" {
				for _, b := range dd.Data {
					if b.Source != "" && !slices.Contains(f.sources, b.Source) {
						f.sources = append(f.sources, b.Source)
					}
				}
				sort.Strings(f.sources)
			}
		}
		out = append(out, f)
	}
	return out, nil
}
