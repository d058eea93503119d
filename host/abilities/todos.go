package abilities

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"

	"github.com/pkuinfo/harness/host/store"
)

func init() {
	store.Register(store.Migration{Version: 101, Name: "todos", SQL: `
CREATE TABLE todos (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	plugin     TEXT    NOT NULL,           -- the plugin that added it
	title      TEXT    NOT NULL,
	notes      TEXT    NOT NULL DEFAULT '',
	due        INTEGER,                    -- Unix ms, NULL when none
	done       INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER NOT NULL,           -- Unix ms
	updated_at INTEGER NOT NULL            -- Unix ms
);
CREATE INDEX todos_plugin ON todos(plugin);`})
}

// Limits of the todos group.
const (
	MaxTodosPerPlugin = 1000 // to-dos one plugin may keep
	maxTodoTitle      = 200  // characters
	maxTodoNotes      = 2000 // characters
	maxTodoList       = 200  // items one list returns
)

// Todo is one of the user's to-dos. In results it is { id, title, notes,
// due, done, source, created, updated }: id a number, due/created/updated
// Unix ms (due null when none), source the id of the plugin that added it.
type Todo struct {
	ID               int64
	Plugin           string
	Title, Notes     string
	Due              *int64
	Done             bool
	Created, Updated int64
}

func (t *Todo) value() any {
	var due any
	if t.Due != nil {
		due = float64(*t.Due)
	}
	return obj("id", float64(t.ID), "title", t.Title, "notes", t.Notes, "due", due, "done", t.Done,
		"source", t.Plugin, "created", float64(t.Created), "updated", float64(t.Updated))
}

const todoCols = `id, plugin, title, notes, due, done, created_at, updated_at`

func scanTodo(scan func(...any) error) (*Todo, error) {
	var t Todo
	var due sql.NullInt64
	if err := scan(&t.ID, &t.Plugin, &t.Title, &t.Notes, &due, &t.Done, &t.Created, &t.Updated); err != nil {
		return nil, err
	}
	if due.Valid {
		t.Due = &due.Int64
	}
	return &t, nil
}

// Todos lists the user's to-dos: open ones first, then by due time (none
// last), then by id. done filters when not nil; at most limit (1–200).
func Todos(ctx context.Context, db *store.DB, done *bool, limit int) (items []*Todo, hasMore bool, err error) {
	q := `SELECT ` + todoCols + ` FROM todos`
	var qa []any
	if done != nil {
		q += ` WHERE done = ?`
		qa = append(qa, *done)
	}
	q += ` ORDER BY done, due IS NULL, due, id LIMIT ?`
	qa = append(qa, limit+1)
	rows, err := db.SQL.QueryContext(ctx, q, qa...)
	if err != nil {
		return nil, false, fmt.Errorf("todos: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		t, err := scanTodo(rows.Scan)
		if err != nil {
			return nil, false, fmt.Errorf("todos: %w", err)
		}
		items = append(items, t)
	}
	if len(items) > limit {
		return items[:limit], true, rows.Err()
	}
	return items, false, rows.Err()
}

// todosList is todos.list { done?, limit? } (read): { items, hasMore,
// truncated } (seed 004 "Results" list shape) over all of the user's
// to-dos, whichever plugin added them. limit is 1–200, default 50.
func (s *Set) todosList(ctx context.Context, c *call) (any, error) {
	if err := c.args.only("done", "limit"); err != nil {
		return nil, err
	}
	var done *bool
	if c.args.has("done") {
		d, err := c.args.boolean("done", false)
		if err != nil {
			return nil, err
		}
		done = &d
	}
	limit, ok, err := c.args.integer("limit", 1, maxTodoList)
	if err != nil {
		return nil, err
	}
	if !ok {
		limit = 50
	}
	items, more, err := Todos(ctx, s.db, done, int(limit))
	if err != nil {
		return nil, err
	}
	list := make([]any, len(items))
	for i, t := range items {
		list[i] = t.value()
	}
	return obj("items", list, "hasMore", more, "truncated", false), nil
}

// todoFields reads title, notes and due into t; required says whether
// title must be there (add) or each field is optional (update). due null
// in update clears it.
func todoFields(c *call, t *Todo, required bool) error {
	if required || c.args.has("title") {
		title, err := c.args.str("title", true, maxTodoTitle)
		if err != nil {
			return err
		}
		if title == "" {
			return errors.New("title is empty")
		}
		t.Title = title
	}
	if c.args.has("notes") {
		n, err := c.args.str("notes", false, maxTodoNotes)
		if err != nil {
			return err
		}
		t.Notes = n
	}
	if c.args.present("due") {
		v := c.args.get("due")
		if v == nil {
			t.Due = nil
		} else {
			f, ok := v.(float64)
			if !ok || f != math.Trunc(f) || f < 0 || f > 1e14 {
				return errors.New("due must be a time in Unix milliseconds (use date(...)) or null")
			}
			d := int64(f)
			t.Due = &d
		}
	}
	return nil
}

// todosAdd is todos.add { title, notes?, due? } (write): the new to-do.
func (s *Set) todosAdd(ctx context.Context, c *call) (any, error) {
	if err := c.args.only("title", "notes", "due"); err != nil {
		return nil, err
	}
	now := s.now().UnixMilli()
	t := &Todo{Plugin: c.Plugin, Created: now, Updated: now}
	if err := todoFields(c, t, true); err != nil {
		return nil, err
	}
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM todos WHERE plugin = ?`, c.Plugin).Scan(&n); err != nil {
			return err
		}
		if n >= MaxTodosPerPlugin {
			return fmt.Errorf("plugin %s already keeps %d to-dos, the limit", c.Plugin, MaxTodosPerPlugin)
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO todos (plugin, title, notes, due, done, created_at, updated_at) VALUES (?, ?, ?, ?, 0, ?, ?)`,
			t.Plugin, t.Title, t.Notes, t.Due, t.Created, t.Updated)
		if err != nil {
			return err
		}
		t.ID, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return nil, err
	}
	return t.value(), nil
}

// ownTodo reads to-do id for a write by plugin: plugins change only the
// to-dos they added, except the app's own to-do list (the built-in plugin
// todos, whose owner flag is set), which changes every one.
func ownTodo(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, id int64, pluginID string, owner bool) (*Todo, error) {
	t, err := scanTodo(q.QueryRowContext(ctx, `SELECT `+todoCols+` FROM todos WHERE id = ?`, id).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("no to-do %d", id)
	}
	if err != nil {
		return nil, err
	}
	if t.Plugin != pluginID && !owner {
		return nil, fmt.Errorf("to-do %d was added by %s: a plugin changes only its own to-dos", id, t.Plugin)
	}
	return t, nil
}

// todoWrite runs change on the plugin's own to-do named by args.id and
// stores it.
func (s *Set) todoWrite(ctx context.Context, c *call, change func(t *Todo) error) (any, error) {
	id, ok, err := c.args.integer("id", 1, math.MaxInt32*1024)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errors.New("id is required")
	}
	var t *Todo
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		var err error
		if t, err = ownTodo(ctx, tx, id, c.Plugin, c.owns("todos")); err != nil {
			return err
		}
		if err := change(t); err != nil {
			return err
		}
		t.Updated = s.now().UnixMilli()
		_, err = tx.ExecContext(ctx, `UPDATE todos SET title = ?, notes = ?, due = ?, done = ?, updated_at = ? WHERE id = ?`,
			t.Title, t.Notes, t.Due, t.Done, t.Updated, t.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return t.value(), nil
}

// todosUpdate is todos.update { id, title?, notes?, due? } (write): the
// changed to-do; due: null clears the due time.
func (s *Set) todosUpdate(ctx context.Context, c *call) (any, error) {
	if err := c.args.only("id", "title", "notes", "due"); err != nil {
		return nil, err
	}
	return s.todoWrite(ctx, c, func(t *Todo) error { return todoFields(c, t, false) })
}

// todosSetDone is todos.setDone { id, done? = true } (write): the changed
// to-do.
func (s *Set) todosSetDone(ctx context.Context, c *call) (any, error) {
	if err := c.args.only("id", "done"); err != nil {
		return nil, err
	}
	done, err := c.args.boolean("done", true)
	if err != nil {
		return nil, err
	}
	return s.todoWrite(ctx, c, func(t *Todo) error { t.Done = done; return nil })
}

// todosRemove is todos.remove { id } (write): { removed: true, id }.
func (s *Set) todosRemove(ctx context.Context, c *call) (any, error) {
	if err := c.args.only("id"); err != nil {
		return nil, err
	}
	id, ok, err := c.args.integer("id", 1, math.MaxInt32*1024)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errors.New("id is required")
	}
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := ownTodo(ctx, tx, id, c.Plugin, c.owns("todos")); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM todos WHERE id = ?`, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return obj("removed", true, "id", float64(id)), nil
}
