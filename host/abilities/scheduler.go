package abilities

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/pkuinfo/harness/host/store"
	"github.com/pkuinfo/harness/lang/expr"
)

func init() {
	store.Register(store.Migration{Version: 103, Name: "schedules and their runs", SQL: `
CREATE TABLE schedules (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	plugin     TEXT    NOT NULL,
	tool       TEXT    NOT NULL,
	title      TEXT    NOT NULL DEFAULT '',
	input      TEXT    NOT NULL DEFAULT '{}', -- JSON tool input
	at         INTEGER,                       -- one run at this Unix ms, or
	every_s    INTEGER,                       -- a run every this many seconds, or
	daily      TEXT,                          -- a run every day at HH:mm, Beijing time
	enabled    INTEGER NOT NULL DEFAULT 1,
	next_run   INTEGER,                       -- Unix ms, NULL when nothing is due any more
	created_at INTEGER NOT NULL
);
CREATE INDEX schedules_due ON schedules(enabled, next_run);
CREATE TABLE schedule_runs (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	schedule    INTEGER NOT NULL REFERENCES schedules(id) ON DELETE CASCADE,
	at          INTEGER NOT NULL, -- Unix ms when the run started
	duration_ms INTEGER NOT NULL,
	ok          INTEGER NOT NULL,
	result      TEXT    NOT NULL DEFAULT 'null', -- JSON of the tool result
	error       TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX schedule_runs_schedule ON schedule_runs(schedule, id);`})
	store.Register(store.Migration{Version: 105, Name: "schedules every N days and a repeat count", SQL: `
ALTER TABLE schedules ADD COLUMN every_days INTEGER; -- with daily: every this many days (NULL = 1)
ALTER TABLE schedules ADD COLUMN remaining INTEGER;  -- runs left, NULL when unbounded`})
}

// Limits of the scheduler group.
const (
	MaxSchedulesPerPlugin = 50               // schedules one plugin may keep
	MinEvery              = 15 * time.Minute // the shortest repeat
	KeptRuns              = 20               // results kept per schedule
	maxDuePerTick         = 20               // schedules RunDue starts at once
)

// Runner runs a scheduled tool. The host's runs it as the scheduler actor
// under the permission rules (host.Host.RunTool with ActorScheduler); a
// Set bound with BindHost uses that.
type Runner interface {
	RunScheduled(ctx context.Context, pluginID, tool string, input any) (any, error)
}

// RunnerFunc adapts a function to Runner.
type RunnerFunc func(ctx context.Context, pluginID, tool string, input any) (any, error)

// RunScheduled implements Runner.
func (f RunnerFunc) RunScheduled(ctx context.Context, pluginID, tool string, input any) (any, error) {
	return f(ctx, pluginID, tool, input)
}

// Scheduler keeps the plugins' schedules (the scheduler group) and runs the
// due ones for the `harness serve` loop.
type Scheduler struct {
	set    *Set
	runner Runner
}

// SetRunner sets how RunDue runs tools.
func (sc *Scheduler) SetRunner(r Runner) { sc.runner = r }

// Schedule is one stored schedule. Exactly one of At, Every and Daily is
// set.
type Schedule struct {
	ID     int64
	Plugin string
	Tool   string
	Title  string
	Input  any           // an expr value
	At     int64         // Unix ms, 0 when not a one-off
	Every  time.Duration // 0 when not repeating
	Daily  string        // "HH:mm" Beijing time, "" when not daily
	// EveryDays, with Daily, repeats every this many days (0 or 1: daily),
	// counted from the first run.
	EveryDays int
	// Remaining is how many runs are left, -1 when unbounded (the seed's
	// "every 3 days at 09:00, 16 times" starts at 16). The run that takes
	// it to 0 is the last; then the schedule is disabled.
	Remaining int
	Enabled   bool
	NextRun   int64 // Unix ms, 0 when nothing is due any more
	Created   int64
}

// Run is one kept run of a schedule: { at, ok, result, error, durationMs }
// in results.
type Run struct {
	Schedule int64
	Plugin   string
	Tool     string
	At       int64 // Unix ms
	Duration time.Duration
	OK       bool
	Result   any    // the tool's result (an expr value) when OK
	Error    string // the error text when not OK
}

func (r *Run) value() any {
	return obj("at", float64(r.At), "ok", r.OK, "result", r.Result, "error", nullIfEmpty(r.Error),
		"durationMs", float64(r.Duration.Milliseconds()))
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// next returns the schedule's next run after now, or 0 when it has none.
// An every-N-days schedule that has run steps N days from the run just
// made (skipping slots missed while the host was off).
func (s *Schedule) next(now time.Time) int64 {
	if s.Daily != "" && s.EveryDays > 1 && s.NextRun != 0 {
		t := time.UnixMilli(s.NextRun).In(beijing)
		for !t.After(now) {
			t = t.AddDate(0, 0, s.EveryDays)
		}
		return t.UnixMilli()
	}
	switch {
	case s.At != 0:
		if s.At > now.UnixMilli() {
			return s.At
		}
		return 0
	case s.Every != 0:
		return now.Add(s.Every).UnixMilli()
	case s.Daily != "":
		var h, m int
		fmt.Sscanf(s.Daily, "%d:%d", &h, &m)
		b := now.In(beijing)
		t := time.Date(b.Year(), b.Month(), b.Day(), h, m, 0, 0, beijing)
		if !t.After(now) {
			t = t.AddDate(0, 0, 1)
		}
		return t.UnixMilli()
	}
	return 0
}

func (sc *Scheduler) value(ctx context.Context, s *Schedule) (any, error) {
	var at, every, daily any
	switch {
	case s.At != 0:
		at = float64(s.At)
	case s.Every != 0:
		every = float64(s.Every / time.Second)
	default:
		daily = s.Daily
	}
	var next, everyDays, remaining any
	if s.NextRun != 0 {
		next = float64(s.NextRun)
	}
	if s.Daily != "" && s.EveryDays > 1 {
		everyDays = float64(s.EveryDays)
	}
	if s.Remaining >= 0 {
		remaining = float64(s.Remaining)
	}
	runs, err := sc.Runs(ctx, s.ID, 1)
	if err != nil {
		return nil, err
	}
	var last any
	if len(runs) > 0 {
		last = runs[0].value()
	}
	return obj("id", float64(s.ID), "tool", s.Tool, "title", s.Title, "input", s.Input,
		"at", at, "every", every, "daily", daily, "everyDays", everyDays, "remaining", remaining,
		"enabled", s.Enabled, "nextRun", next, "lastRun", last), nil
}

const schedCols = `id, plugin, tool, title, input, at, every_s, daily, enabled, next_run, created_at, every_days, remaining`

func scanSchedule(scan func(...any) error) (*Schedule, error) {
	var s Schedule
	var input string
	var at, every, next, everyDays, remaining sql.NullInt64
	var daily sql.NullString
	if err := scan(&s.ID, &s.Plugin, &s.Tool, &s.Title, &input, &at, &every, &daily, &s.Enabled, &next, &s.Created, &everyDays, &remaining); err != nil {
		return nil, err
	}
	s.EveryDays, s.Remaining = int(everyDays.Int64), -1
	if remaining.Valid {
		s.Remaining = int(remaining.Int64)
	}
	v, err := expr.FromJSON([]byte(input))
	if err != nil {
		return nil, fmt.Errorf("schedule %d: stored input: %w", s.ID, err)
	}
	s.Input, s.At, s.Every, s.Daily, s.NextRun = v, at.Int64, time.Duration(every.Int64)*time.Second, daily.String, next.Int64
	return &s, nil
}

// Get returns schedule id; ok is false when there is none.
func (sc *Scheduler) Get(ctx context.Context, id int64) (*Schedule, bool, error) {
	s, err := scanSchedule(sc.set.db.SQL.QueryRowContext(ctx, `SELECT `+schedCols+` FROM schedules WHERE id = ?`, id).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return s, true, nil
}

// List returns the schedules of pluginID ("" for every plugin's), by id.
func (sc *Scheduler) List(ctx context.Context, pluginID string) ([]*Schedule, error) {
	rows, err := sc.set.db.SQL.QueryContext(ctx, `SELECT `+schedCols+` FROM schedules WHERE ? = '' OR plugin = ? ORDER BY id`, pluginID, pluginID)
	if err != nil {
		return nil, fmt.Errorf("schedules: %w", err)
	}
	defer rows.Close()
	var out []*Schedule
	for rows.Next() {
		s, err := scanSchedule(rows.Scan)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// Runs returns the kept runs of schedule id, newest first, at most limit.
func (sc *Scheduler) Runs(ctx context.Context, id int64, limit int) ([]*Run, error) {
	rows, err := sc.set.db.SQL.QueryContext(ctx, `SELECT r.at, r.duration_ms, r.ok, r.result, r.error, s.plugin, s.tool
		FROM schedule_runs r JOIN schedules s ON s.id = r.schedule WHERE r.schedule = ? ORDER BY r.id DESC LIMIT ?`, id, limit)
	if err != nil {
		return nil, fmt.Errorf("schedule runs: %w", err)
	}
	defer rows.Close()
	var out []*Run
	for rows.Next() {
		r := &Run{Schedule: id}
		var dur int64
		var result string
		if err := rows.Scan(&r.At, &dur, &r.OK, &result, &r.Error, &r.Plugin, &r.Tool); err != nil {
			return nil, err
		}
		r.Duration = time.Duration(dur) * time.Millisecond
		if r.Result, err = expr.FromJSON([]byte(result)); err != nil {
			return nil, fmt.Errorf("schedule %d: stored result: %w", id, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// RunDue runs every enabled schedule whose time has come (at most 20 per
// call), each once even when several processes call RunDue at once: a run
// is claimed by moving its next_run before the tool starts. Each run's
// result or error is kept (the last KeptRuns per schedule). It returns the
// runs made, in order. Without a runner it fails.
func (sc *Scheduler) RunDue(ctx context.Context) ([]*Run, error) {
	if sc.runner == nil {
		return nil, errors.New("scheduler: no runner (bind the abilities to a host)")
	}
	now := sc.set.now()
	rows, err := sc.set.db.SQL.QueryContext(ctx, `SELECT `+schedCols+` FROM schedules
		WHERE enabled = 1 AND next_run IS NOT NULL AND next_run <= ? ORDER BY next_run, id LIMIT ?`, now.UnixMilli(), maxDuePerTick)
	if err != nil {
		return nil, fmt.Errorf("scheduler: %w", err)
	}
	var due []*Schedule
	for rows.Next() {
		s, err := scanSchedule(rows.Scan)
		if err != nil {
			rows.Close()
			return nil, err
		}
		due = append(due, s)
	}
	rows.Close()
	var runs []*Run
	for _, s := range due {
		next := s.next(now)
		remaining := s.Remaining
		if remaining > 0 {
			remaining--
			if remaining == 0 {
				next = 0 // this run is the last
			}
		}
		var nextArg any
		if next != 0 {
			nextArg = next
		}
		res, err := sc.set.db.SQL.ExecContext(ctx, `UPDATE schedules SET next_run = ?, enabled = ?, remaining = ? WHERE id = ? AND next_run = ? AND enabled = 1`,
			nextArg, next != 0, nullCount(remaining), s.ID, s.NextRun)
		if err != nil {
			return runs, fmt.Errorf("scheduler: claim %d: %w", s.ID, err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			continue // another process took it
		}
		start := time.Now()
		v, runErr := sc.runner.RunScheduled(ctx, s.Plugin, s.Tool, s.Input)
		r := &Run{Schedule: s.ID, Plugin: s.Plugin, Tool: s.Tool, At: now.UnixMilli(), Duration: time.Since(start), OK: runErr == nil}
		result := []byte("null")
		if runErr != nil {
			r.Error = runErr.Error()
		} else {
			r.Result = v
			if result, err = expr.ToJSON(v, ""); err != nil {
				r.OK, r.Result, r.Error, result = false, nil, "result: "+err.Error(), []byte("null")
			}
		}
		err = sc.set.db.Tx(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO schedule_runs (schedule, at, duration_ms, ok, result, error) VALUES (?, ?, ?, ?, ?, ?)`,
				s.ID, r.At, r.Duration.Milliseconds(), r.OK, string(result), r.Error); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `DELETE FROM schedule_runs WHERE schedule = ? AND id NOT IN
				(SELECT id FROM schedule_runs WHERE schedule = ? ORDER BY id DESC LIMIT ?)`, s.ID, s.ID, KeptRuns)
			return err
		})
		if err != nil {
			return runs, fmt.Errorf("scheduler: keep the run of %d: %w", s.ID, err)
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// Bounds of everyDays and times.
const (
	MaxEveryDays = 365
	MaxTimes     = 1000
)

// timing reads at | every | daily (with everyDays?) and times? into s;
// exactly one of at, every and daily must be given.
func timing(c *call, s *Schedule, now time.Time, required bool) error {
	n := 0
	for _, k := range []string{"at", "every", "daily"} {
		if c.args.has(k) {
			n++
		}
	}
	if n == 0 && !required {
		if c.args.has("everyDays") || c.args.has("times") {
			return errors.New("everyDays and times go with a new daily (or every) time: give it again")
		}
		return nil
	}
	if err := repeat(c, s); err != nil {
		return err
	}
	if n != 1 {
		return errors.New("give exactly one of at (Unix ms), every (a duration of at least 15m) and daily (HH:mm, Beijing time)")
	}
	s.At, s.Every, s.Daily = 0, 0, ""
	switch {
	case c.args.has("at"):
		at, _, err := c.args.integer("at", 0, 1e14)
		if err != nil {
			return err
		}
		if at <= now.UnixMilli() {
			return fmt.Errorf("at %d is not in the future", at)
		}
		s.At = at
	case c.args.has("every"):
		d, err := parseDuration(c.args.get("every"))
		if err != nil {
			return fmt.Errorf("every: %v", err)
		}
		if d < MinEvery {
			return fmt.Errorf("every: %s is shorter than %s", d, MinEvery)
		}
		s.Every = d
	default:
		d, err := c.args.str("daily", true, 5)
		if err != nil {
			return err
		}
		if !hhmm.MatchString(d) {
			return fmt.Errorf("daily must be HH:mm (got %q)", d)
		}
		s.Daily = d
	}
	if s.EveryDays > 1 && s.Daily == "" {
		return errors.New("everyDays goes with daily (HH:mm): every N days at that time")
	}
	if s.Remaining >= 0 && s.At != 0 {
		return errors.New("times goes with every or daily; a one-off (at) runs once")
	}
	return nil
}

// repeat reads everyDays (1–365) and times (1–1000) into s.
func repeat(c *call, s *Schedule) error {
	s.EveryDays, s.Remaining = 0, -1
	if c.args.has("everyDays") {
		n, _, err := c.args.integer("everyDays", 1, MaxEveryDays)
		if err != nil {
			return err
		}
		s.EveryDays = int(n)
	}
	if c.args.has("times") {
		n, _, err := c.args.integer("times", 1, MaxTimes)
		if err != nil {
			return err
		}
		s.Remaining = int(n)
	}
	return nil
}

func nullCount(n int) any {
	if n < 0 {
		return nil
	}
	return n
}

// create is scheduler.create { tool, input?, title?, at | every | daily,
// everyDays?, times? } (write): a schedule that runs one of the plugin's
// own tools, as the scheduler actor, at its times: once at a Unix ms,
// every duration, or daily at HH:mm (Beijing time), with everyDays every
// N days at that time, and times the number of runs after which it stops.
// Result: the schedule { id, tool, title, input, at, every (seconds),
// daily, everyDays, remaining, enabled, nextRun, lastRun }.
func (sc *Scheduler) create(ctx context.Context, c *call) (any, error) {
	if err := c.args.only("tool", "input", "title", "at", "every", "daily", "everyDays", "times"); err != nil {
		return nil, err
	}
	now := sc.set.now()
	s := &Schedule{Plugin: c.Plugin, Enabled: true, Created: now.UnixMilli(), Remaining: -1}
	var err error
	if s.Tool, err = c.args.str("tool", true, 40); err != nil {
		return nil, err
	}
	if c.p != nil {
		t := c.p.Tool(s.Tool)
		if t == nil {
			return nil, fmt.Errorf("plugin %s has no tool %q", c.Plugin, s.Tool)
		}
		if t.UserOnly {
			return nil, fmt.Errorf("tool %s is userOnly: only a person's tap runs it, never the scheduler", s.Tool)
		}
	}
	if s.Title, err = c.args.str("title", false, 100); err != nil {
		return nil, err
	}
	s.Input = c.args.get("input")
	if s.Input == nil {
		s.Input = expr.NewObject(0)
	}
	if _, ok := s.Input.(*expr.Object); !ok {
		return nil, fmt.Errorf("input must be an object, not %s", expr.TypeOf(s.Input))
	}
	input, err := expr.ToJSON(s.Input, "")
	if err != nil {
		return nil, fmt.Errorf("input: %v", err)
	}
	if len(input) > 16<<10 {
		return nil, errTooLong("input", len(input), 16<<10)
	}
	if err := timing(c, s, now, true); err != nil {
		return nil, err
	}
	s.NextRun = s.next(now)
	err = sc.set.db.Tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM schedules WHERE plugin = ?`, c.Plugin).Scan(&n); err != nil {
			return err
		}
		if n >= MaxSchedulesPerPlugin {
			return fmt.Errorf("plugin %s already has %d schedules, the limit", c.Plugin, MaxSchedulesPerPlugin)
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO schedules (plugin, tool, title, input, at, every_s, daily, enabled, next_run, created_at, every_days, remaining)
			VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?)`, s.Plugin, s.Tool, s.Title, string(input),
			nullInt(s.At), nullInt(int64(s.Every/time.Second)), nullStr(s.Daily), s.NextRun, s.Created,
			nullInt(int64(s.EveryDays)), nullCount(s.Remaining))
		if err != nil {
			return err
		}
		s.ID, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return nil, err
	}
	return sc.value(ctx, s)
}

func nullInt(n int64) any {
	if n == 0 {
		return nil
	}
	return n
}

func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// own reads schedule args.id for a change by the calling plugin.
func (sc *Scheduler) own(ctx context.Context, c *call) (*Schedule, error) {
	id, ok, err := c.args.integer("id", 1, math.MaxInt32*1024)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errors.New("id is required")
	}
	s, found, err := sc.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if !found || s.Plugin != c.Plugin {
		return nil, fmt.Errorf("plugin %s has no schedule %d", c.Plugin, id)
	}
	return s, nil
}

// list is scheduler.list (read): { items } with the calling plugin's
// schedules (plugins see only their own), by id.
func (sc *Scheduler) list(ctx context.Context, c *call) (any, error) {
	if err := c.args.only(); err != nil {
		return nil, err
	}
	ss, err := sc.List(ctx, c.Plugin)
	if err != nil {
		return nil, err
	}
	items := []any{}
	for _, s := range ss {
		v, err := sc.value(ctx, s)
		if err != nil {
			return nil, err
		}
		items = append(items, v)
	}
	return obj("items", items), nil
}

// update is scheduler.update { id, title?, input?, enabled?, at | every |
// daily, everyDays?, times? } (write): the changed schedule. A new time,
// or enabling it again, computes the next run from now.
func (sc *Scheduler) update(ctx context.Context, c *call) (any, error) {
	if err := c.args.only("id", "title", "input", "enabled", "at", "every", "daily", "everyDays", "times"); err != nil {
		return nil, err
	}
	s, err := sc.own(ctx, c)
	if err != nil {
		return nil, err
	}
	now := sc.set.now()
	if c.args.has("title") {
		if s.Title, err = c.args.str("title", false, 100); err != nil {
			return nil, err
		}
	}
	if c.args.has("input") {
		if _, ok := c.args.get("input").(*expr.Object); !ok {
			return nil, errors.New("input must be an object")
		}
		s.Input = c.args.get("input")
	}
	input, err := expr.ToJSON(s.Input, "")
	if err != nil {
		return nil, fmt.Errorf("input: %v", err)
	}
	if len(input) > 16<<10 {
		return nil, errTooLong("input", len(input), 16<<10)
	}
	if err := timing(c, s, now, false); err != nil {
		return nil, err
	}
	if s.Enabled, err = c.args.boolean("enabled", s.Enabled); err != nil {
		return nil, err
	}
	s.NextRun = 0
	if s.Enabled {
		s.NextRun = s.next(now)
	}
	_, err = sc.set.db.SQL.ExecContext(ctx, `UPDATE schedules SET title = ?, input = ?, at = ?, every_s = ?, daily = ?, enabled = ?, next_run = ?, every_days = ?, remaining = ? WHERE id = ?`,
		s.Title, string(input), nullInt(s.At), nullInt(int64(s.Every/time.Second)), nullStr(s.Daily), s.Enabled, nullInt(s.NextRun),
		nullInt(int64(s.EveryDays)), nullCount(s.Remaining), s.ID)
	if err != nil {
		return nil, err
	}
	return sc.value(ctx, s)
}

// remove is scheduler.remove { id } (write): { removed: true, id }; its
// kept runs go with it.
func (sc *Scheduler) remove(ctx context.Context, c *call) (any, error) {
	if err := c.args.only("id"); err != nil {
		return nil, err
	}
	s, err := sc.own(ctx, c)
	if err != nil {
		return nil, err
	}
	if _, err := sc.set.db.SQL.ExecContext(ctx, `DELETE FROM schedules WHERE id = ?`, s.ID); err != nil {
		return nil, err
	}
	return obj("removed", true, "id", float64(s.ID)), nil
}
