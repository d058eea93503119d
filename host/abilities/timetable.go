package abilities

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"

	"github.com/pkuinfo/harness/host/store"
	"github.com/pkuinfo/harness/lang/expr"
)

func init() {
	store.Register(store.Migration{Version: 102, Name: "timetable", SQL: `
CREATE TABLE timetable (
	plugin     TEXT    NOT NULL, -- the plugin that wrote the entry
	id         TEXT    NOT NULL, -- the plugin's own id for it
	weekday    INTEGER NOT NULL, -- 1 = Monday … 7 = Sunday
	start      TEXT    NOT NULL, -- HH:mm, Beijing time
	entry      TEXT    NOT NULL, -- JSON of the whole entry
	updated_at INTEGER NOT NULL, -- Unix ms
	PRIMARY KEY (plugin, id)
);`})
}

// Limits of the timetable group.
const (
	MaxTimetablePerPlugin = 500 // entries one plugin may keep
	maxUpsert             = 200 // entries one upsert may write
)

var (
	hhmm      = regexp.MustCompile(`^([01][0-9]|2[0-3]):[0-5][0-9]$`)
	entryID   = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,64}$`)
	entryKeys = []string{"id", "title", "weekday", "start", "end", "location", "teacher", "weeks", "note"}
)

// timetableEntry checks one entry { id, title, weekday (1–7), start, end
// ("HH:mm", Beijing time, end after start), location?, teacher?, weeks?
// (list of week numbers 1–30), note? } and returns it in that key order
// with source set, ready to store.
func timetableEntry(v any, pluginID string) (*expr.Object, error) {
	o, ok := v.(*expr.Object)
	if !ok {
		return nil, fmt.Errorf("must be an object, not %s", expr.TypeOf(v))
	}
	a := &args{o: o}
	if err := a.only(entryKeys...); err != nil {
		return nil, err
	}
	id, err := a.str("id", true, 64)
	if err != nil {
		return nil, err
	}
	if !entryID.MatchString(id) {
		return nil, fmt.Errorf("id %q: use 1–64 letters, digits and _ . : -", id)
	}
	title, err := a.str("title", true, 100)
	if err != nil {
		return nil, err
	}
	if title == "" {
		return nil, errors.New("title is empty")
	}
	wd, ok, err := a.integer("weekday", 1, 7)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errors.New("weekday is required (1 = Monday … 7 = Sunday)")
	}
	start, err := a.str("start", true, 5)
	if err != nil {
		return nil, err
	}
	end, err := a.str("end", true, 5)
	if err != nil {
		return nil, err
	}
	if !hhmm.MatchString(start) || !hhmm.MatchString(end) {
		return nil, fmt.Errorf("start and end must be HH:mm (got %q and %q)", start, end)
	}
	if end <= start {
		return nil, fmt.Errorf("end %s is not after start %s", end, start)
	}
	out := obj("id", id, "title", title, "weekday", float64(wd), "start", start, "end", end)
	for _, k := range []string{"location", "teacher", "note"} {
		s, err := a.str(k, false, 200)
		if err != nil {
			return nil, err
		}
		if s != "" {
			out.Set(k, s)
		} else {
			out.Set(k, nil)
		}
	}
	weeks := []any{}
	if w := a.get("weeks"); w != nil {
		list, ok := w.([]any)
		if !ok || len(list) > 30 {
			return nil, errors.New("weeks must be a list of at most 30 week numbers")
		}
		for i, x := range list {
			f, ok := x.(float64)
			if !ok || f != float64(int(f)) || f < 1 || f > 30 {
				return nil, fmt.Errorf("weeks[%d] must be a week number 1–30", i)
			}
			weeks = append(weeks, f)
		}
	}
	out.Set("weeks", weeks)
	out.Set("source", pluginID)
	return out, nil
}

// timetableGet is timetable.get { weekday? } (read): { entries } over the
// whole timetable, whichever plugin wrote each entry, by weekday and start
// time. Each entry is { id, title, weekday, start, end, location, teacher,
// note, weeks, source }.
func (s *Set) timetableGet(ctx context.Context, c *call) (any, error) {
	if err := c.args.only("weekday"); err != nil {
		return nil, err
	}
	wd, _, err := c.args.integer("weekday", 1, 7)
	if err != nil {
		return nil, err
	}
	entries, err := Timetable(ctx, s.db, int(wd))
	if err != nil {
		return nil, err
	}
	return obj("entries", entries), nil
}

// timetableUpsert is timetable.upsert { entries } (write): it adds each
// entry, or replaces the plugin's entry with the same id. All or none are
// written. Result: { upserted: N }.
func (s *Set) timetableUpsert(ctx context.Context, c *call) (any, error) {
	if err := c.args.only("entries"); err != nil {
		return nil, err
	}
	list, ok := c.args.get("entries").([]any)
	if !ok {
		return nil, errors.New("entries must be a list of entries { id, title, weekday, start, end, … }")
	}
	if len(list) > maxUpsert {
		return nil, fmt.Errorf("entries: %d items, the limit is %d", len(list), maxUpsert)
	}
	type row struct {
		id, start, js string
		weekday       int
	}
	rowsIn := make([]row, len(list))
	for i, v := range list {
		e, err := timetableEntry(v, c.Plugin)
		if err != nil {
			return nil, fmt.Errorf("entries[%d]: %v", i, err)
		}
		js, err := expr.ToJSON(e, "")
		if err != nil {
			return nil, fmt.Errorf("entries[%d]: %v", i, err)
		}
		id, _ := e.Get("id")
		start, _ := e.Get("start")
		wd, _ := e.Get("weekday")
		rowsIn[i] = row{id.(string), start.(string), string(js), int(wd.(float64))}
	}
	now := s.now().UnixMilli()
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		for _, r := range rowsIn {
			if _, err := tx.ExecContext(ctx, `INSERT INTO timetable (plugin, id, weekday, start, entry, updated_at) VALUES (?, ?, ?, ?, ?, ?)
				ON CONFLICT (plugin, id) DO UPDATE SET weekday = excluded.weekday, start = excluded.start, entry = excluded.entry, updated_at = excluded.updated_at`,
				c.Plugin, r.id, r.weekday, r.start, r.js, now); err != nil {
				return err
			}
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM timetable WHERE plugin = ?`, c.Plugin).Scan(&n); err != nil {
			return err
		}
		if n > MaxTimetablePerPlugin {
			return fmt.Errorf("plugin %s would keep %d timetable entries, the limit is %d", c.Plugin, n, MaxTimetablePerPlugin)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return obj("upserted", float64(len(rowsIn))), nil
}

// timetableRemove is timetable.remove { ids } | { all: true } (write): it
// removes the plugin's own entries with those ids, or all of them.
// Result: { removed: N }.
func (s *Set) timetableRemove(ctx context.Context, c *call) (any, error) {
	if err := c.args.only("ids", "all"); err != nil {
		return nil, err
	}
	all, err := c.args.boolean("all", false)
	if err != nil {
		return nil, err
	}
	ids, isList := c.args.get("ids").([]any)
	if all == isList {
		return nil, errors.New("give ids (a list of entry ids) or all: true")
	}
	var n int64
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		if all {
			res, err := tx.ExecContext(ctx, `DELETE FROM timetable WHERE plugin = ?`, c.Plugin)
			if err != nil {
				return err
			}
			n, err = res.RowsAffected()
			return err
		}
		if len(ids) > maxUpsert {
			return fmt.Errorf("ids: %d items, the limit is %d", len(ids), maxUpsert)
		}
		for i, v := range ids {
			id, ok := v.(string)
			if !ok {
				return fmt.Errorf("ids[%d] must be a string", i)
			}
			res, err := tx.ExecContext(ctx, `DELETE FROM timetable WHERE plugin = ? AND id = ?`, c.Plugin, id)
			if err != nil {
				return err
			}
			k, _ := res.RowsAffected()
			n += k
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return obj("removed", float64(n)), nil
}

// Timetable returns the user's timetable entries (expr objects, the shape
// of timetable.get) by weekday and start time; weekday 1–7 picks one day, 0
// every day.
func Timetable(ctx context.Context, db *store.DB, weekday int) ([]any, error) {
	q := `SELECT entry FROM timetable`
	var qa []any
	if weekday != 0 {
		q += ` WHERE weekday = ?`
		qa = append(qa, weekday)
	}
	rows, err := db.SQL.QueryContext(ctx, q+` ORDER BY weekday, start, plugin, id`, qa...)
	if err != nil {
		return nil, fmt.Errorf("timetable: %w", err)
	}
	defer rows.Close()
	entries := []any{}
	for rows.Next() {
		var js string
		if err := rows.Scan(&js); err != nil {
			return nil, err
		}
		v, err := expr.FromJSON([]byte(js))
		if err != nil {
			return nil, fmt.Errorf("timetable: stored entry: %w", err)
		}
		entries = append(entries, v)
	}
	return entries, rows.Err()
}
