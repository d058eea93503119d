package server

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/pkuinfo/harness/cloud/protocol"
	_ "modernc.org/sqlite" // the embedded SQLite driver, registered as "sqlite"
)

// schema is portable SQL (SQLite and PostgreSQL): TEXT, BIGINT, composite primary keys,
// ON CONFLICT upserts and RETURNING. Sizes are kept in columns so no length function (which
// counts characters in SQLite and bytes in PostgreSQL) is needed. The queries below use the
// same subset; a PostgreSQL backend needs only to number the `?` placeholders ($1, $2, …) and
// to map unique violations to ErrConflict, and must pass TestStorageConformance.
var schema = []string{
	`CREATE TABLE IF NOT EXISTS devices (
		id TEXT PRIMARY KEY, sign_pub TEXT NOT NULL UNIQUE, box_pub TEXT NOT NULL, created_at BIGINT NOT NULL)`,
	`CREATE TABLE IF NOT EXISTS auth_nonces (
		device TEXT NOT NULL, nonce TEXT NOT NULL, until_ms BIGINT NOT NULL, PRIMARY KEY (device, nonce))`,
	`CREATE TABLE IF NOT EXISTS store_ns (
		device TEXT NOT NULL, plugin TEXT NOT NULL, seq BIGINT NOT NULL, PRIMARY KEY (device, plugin))`,
	`CREATE TABLE IF NOT EXISTS store_values (
		device TEXT NOT NULL, plugin TEXT NOT NULL, k TEXT NOT NULL, v TEXT NOT NULL, size BIGINT NOT NULL,
		version BIGINT NOT NULL, updated_at BIGINT NOT NULL, expires_at BIGINT NOT NULL,
		PRIMARY KEY (device, plugin, k))`,
	`CREATE TABLE IF NOT EXISTS channels (
		id TEXT PRIMARY KEY, device TEXT NOT NULL, plugin TEXT NOT NULL, join_hash TEXT NOT NULL,
		chan_pub TEXT NOT NULL, meta TEXT NOT NULL, max_peers BIGINT NOT NULL, page TEXT NOT NULL,
		status TEXT NOT NULL, created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL)`,
	`CREATE INDEX IF NOT EXISTS channels_device ON channels (device, status)`,
	`CREATE TABLE IF NOT EXISTS peers (
		channel TEXT NOT NULL, peer_id TEXT NOT NULL, pub TEXT NOT NULL, token_hash TEXT NOT NULL UNIQUE,
		joined_at BIGINT NOT NULL, PRIMARY KEY (channel, peer_id))`,
	`CREATE TABLE IF NOT EXISTS mailbox (
		channel TEXT NOT NULL, slot TEXT NOT NULL, env TEXT NOT NULL, expires_at BIGINT NOT NULL,
		PRIMARY KEY (channel, slot))`,
	`CREATE TABLE IF NOT EXISTS secrets (name TEXT PRIMARY KEY, v TEXT NOT NULL)`,
}

// storeSchema keeps the store quotas cheap to check: store_usage holds, per namespace, the
// number and total size of the rows in store_values (expired ones included until Sweep removes
// them), kept up to date by triggers on every insert, update and delete, whoever makes it. Since
// expired rows can only inflate it, a put that fits by store_usage fits for certain; one that
// does not is checked again by an exact scan of the live rows. OpenSQLite recounts it. The
// trigger syntax is SQLite's; a PostgreSQL backend keeps the same counters with its own
// triggers, or counts as the exact scan does.
var storeSchema = []string{
	`CREATE TABLE IF NOT EXISTS store_usage (
		device TEXT NOT NULL, plugin TEXT NOT NULL, n BIGINT NOT NULL, bytes BIGINT NOT NULL,
		PRIMARY KEY (device, plugin))`,
	`CREATE TRIGGER IF NOT EXISTS store_usage_ins AFTER INSERT ON store_values BEGIN
		INSERT INTO store_usage (device, plugin, n, bytes) VALUES (new.device, new.plugin, 1, new.size)
		ON CONFLICT (device, plugin) DO UPDATE SET n = n + 1, bytes = bytes + excluded.bytes;
	END`,
	`CREATE TRIGGER IF NOT EXISTS store_usage_upd AFTER UPDATE ON store_values BEGIN
		UPDATE store_usage SET n = n - 1, bytes = bytes - old.size WHERE device = old.device AND plugin = old.plugin;
		INSERT INTO store_usage (device, plugin, n, bytes) VALUES (new.device, new.plugin, 1, new.size)
		ON CONFLICT (device, plugin) DO UPDATE SET n = n + 1, bytes = bytes + excluded.bytes;
	END`,
	`CREATE TRIGGER IF NOT EXISTS store_usage_del AFTER DELETE ON store_values BEGIN
		UPDATE store_usage SET n = n - 1, bytes = bytes - old.size WHERE device = old.device AND plugin = old.plugin;
	END`,
}

// SQLite is the embedded Storage: one database file (or ":memory:") in WAL mode with
// synchronous=NORMAL (a commit is durable against a crash of the process, and against power loss
// once the WAL is checkpointed; the database is never corrupted). Writes go through one
// connection, so every conditional write is a serialised transaction; store puts and deletes are
// group-committed by one writer goroutine (see storeWriter). Plain reads use a pool of read-only
// connections, which in WAL mode never wait for the writer and see every committed write.
type SQLite struct {
	db *sql.DB // the writer: one connection
	rd *sql.DB // readers: several query_only connections; db itself for ":memory:"

	// Statements prepared once for the life of the store.
	get, device               *sql.Stmt // on rd
	cur, live, seq, put, drop *sql.Stmt // on db, used inside the writer's transactions
	devLive                   *sql.Stmt // the device-wide quota's exact count (deviceQuotaTx), on db

	// devices caches Device answers: every request with a plugin token looks its device up,
	// and a device never changes, it is only deleted (through this SQLite, which drops it
	// here). devGen counts deletions, so a lookup that raced one does not cache its answer.
	devMu   sync.RWMutex
	devices map[string]Device
	devGen  uint64

	mu     sync.RWMutex // guards closed against sends on ops
	closed bool
	ops    chan *storeOp
	done   chan struct{} // closed when the writer goroutine has returned
}

// readConns is the size of the read pool. Reads are short; a few connections keep both cores
// busy without piling up SQLite page caches.
const readConns = 4

// OpenSQLite opens (creating if needed) the database at path, or an in-memory database when
// path is ":memory:", and creates the schema.
func OpenSQLite(ctx context.Context, path string) (*SQLite, error) {
	dsn := "file:" + path + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
	if path == ":memory:" {
		dsn = ":memory:"
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	s := &SQLite{db: db, rd: db, devices: map[string]Device{}, ops: make(chan *storeOp, 256), done: make(chan struct{})}
	fail := func(what string, err error) (*SQLite, error) {
		s.closeDBs()
		return nil, fmt.Errorf("sqlite %s: %s: %w", path, what, err)
	}
	for _, q := range append(append([]string{}, schema...), storeSchema...) {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fail("schema", err)
		}
	}
	// Recount store_usage: cheap, and right even for a database written before it existed.
	if err := s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM store_usage`); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO store_usage (device, plugin, n, bytes)
			SELECT device, plugin, COUNT(*), SUM(size) FROM store_values GROUP BY device, plugin`)
		return err
	}); err != nil {
		return fail("store usage", err)
	}
	if path != ":memory:" {
		rd, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=query_only(1)")
		if err != nil {
			return fail("readers", err)
		}
		rd.SetMaxOpenConns(readConns)
		rd.SetMaxIdleConns(readConns)
		rd.SetConnMaxLifetime(0)
		s.rd = rd
	}
	for _, p := range []struct {
		st **sql.Stmt
		db *sql.DB
		q  string
	}{
		{&s.get, s.rd, `SELECT v, version, updated_at, expires_at FROM store_values
			WHERE device = ? AND plugin = ? AND k = ? AND (expires_at = 0 OR expires_at > ?)`},
		{&s.device, s.rd, `SELECT sign_pub, box_pub, created_at FROM devices WHERE id = ?`},
		{&s.cur, s.db, `SELECT v.version, v.size, v.expires_at, COALESCE(u.n, 0), COALESCE(u.bytes, 0),
			d.plugins, d.bytes, d.here
			FROM (SELECT ? AS device, ? AS plugin, ? AS k) q
			JOIN (SELECT COUNT(*) AS plugins, COALESCE(SUM(bytes), 0) AS bytes, COALESCE(MAX(plugin = ?2), 0) AS here
				FROM store_usage WHERE device = ?1 AND n > 0) d
			LEFT JOIN store_values v ON v.device = q.device AND v.plugin = q.plugin AND v.k = q.k
			LEFT JOIN store_usage u ON u.device = q.device AND u.plugin = q.plugin`},
		{&s.live, s.db, `SELECT COUNT(*), COALESCE(SUM(size), 0) FROM store_values
			WHERE device = ? AND plugin = ? AND k <> ? AND (expires_at = 0 OR expires_at > ?)`},
		{&s.devLive, s.db, `SELECT COUNT(DISTINCT plugin), COALESCE(SUM(size), 0), COALESCE(MAX(plugin = ?), 0)
			FROM store_values WHERE device = ? AND NOT (plugin = ? AND k = ?) AND (expires_at = 0 OR expires_at > ?)`},
		{&s.seq, s.db, `INSERT INTO store_ns (device, plugin, seq) VALUES (?, ?, 1)
			ON CONFLICT (device, plugin) DO UPDATE SET seq = store_ns.seq + 1 RETURNING seq`},
		{&s.put, s.db, `INSERT INTO store_values (device, plugin, k, v, size, version, updated_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (device, plugin, k) DO UPDATE SET v = excluded.v, size = excluded.size,
				version = excluded.version, updated_at = excluded.updated_at, expires_at = excluded.expires_at`},
		{&s.drop, s.db, `DELETE FROM store_values WHERE device = ? AND plugin = ? AND k = ?
			AND (expires_at = 0 OR expires_at > ?)`},
	} {
		if *p.st, err = p.db.PrepareContext(ctx, p.q); err != nil {
			return fail("prepare", err)
		}
	}
	go s.storeWriter()
	return s, nil
}

func (s *SQLite) closeDBs() error {
	var errs []error
	for _, st := range []*sql.Stmt{s.get, s.device, s.cur, s.live, s.seq, s.put, s.drop, s.devLive} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	if s.rd != s.db {
		errs = append(errs, s.rd.Close())
	}
	errs = append(errs, s.db.Close())
	return errors.Join(errs...)
}

// Close waits for the store writes already handed over, then closes the database.
func (s *SQLite) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.ops)
	s.mu.Unlock()
	<-s.done
	return s.closeDBs()
}

// storeOp is one store put (or delete, with del set) handed to the writer goroutine, with its
// result.
type storeOp struct {
	ctx     context.Context
	ns      Namespace
	it      StoreItem
	ifMatch *int64
	q       StoreQuota
	now     int64
	del     bool

	version int64
	err     error
	done    chan struct{}
}

var errClosed = errors.New("sqlite: storage closed")

// do hands op to the writer and waits for its result. The wait does not end with ctx: an op
// the writer has taken is either committed or not, and the caller learns which.
func (s *SQLite) do(op *storeOp) (int64, error) {
	op.done = make(chan struct{})
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return 0, errClosed
	}
	s.ops <- op
	s.mu.RUnlock()
	<-op.done
	return op.version, op.err
}

// maxBatch bounds the ops of one group commit.
const maxBatch = 128

// storeWriter is the group commit: it takes every op waiting (up to maxBatch) and runs them in
// order in one transaction, each validated on its own (If-Match, quota) against the state the
// ops before it left, and answers them all once the transaction has committed. An op that ends
// in ErrConflict, ErrNotFound or a *QuotaError has written nothing, so it does not disturb the
// others; any other error rolls the batch back and each op is run again in its own transaction.
func (s *SQLite) storeWriter() {
	defer close(s.done)
	batch := make([]*storeOp, 0, maxBatch)
	for op := range s.ops {
		batch = append(batch[:0], op)
		if len(s.ops) == 0 {
			runtime.Gosched() // let the callers just answered hand over their next ops
		}
	more:
		for len(batch) < maxBatch {
			select {
			case op, ok := <-s.ops:
				if !ok {
					break more
				}
				batch = append(batch, op)
			default:
				break more
			}
		}
		if err := s.runBatch(batch); err != nil && len(batch) > 1 {
			for _, op := range batch {
				s.runBatch([]*storeOp{op})
			}
		}
		for _, op := range batch {
			close(op.done)
		}
	}
}

// runBatch runs ops in one transaction. It returns an error, with the transaction rolled back,
// when one op failed other than by its own condition or the commit failed; ops then hold that
// error.
func (s *SQLite) runBatch(ops []*storeOp) error {
	ctx := context.Background()
	fail := func(err error) error {
		for _, op := range ops {
			op.version, op.err = 0, err
		}
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	for _, op := range ops {
		if op.err = op.ctx.Err(); op.err != nil {
			continue
		}
		if op.del {
			op.err = s.deleteTx(ctx, tx, op)
		} else {
			op.version, op.err = s.putTx(ctx, tx, op)
		}
		var qe *QuotaError
		if op.err != nil && !errors.Is(op.err, ErrConflict) && !errors.Is(op.err, ErrNotFound) && !errors.As(op.err, &qe) {
			tx.Rollback()
			return fail(op.err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return nil
}

func (s *SQLite) tx(ctx context.Context, f func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

func isUnique(err error) bool {
	return err != nil && strings.Contains(strings.ToLower(err.Error()), "unique")
}

// CreateDevice implements Storage.
func (s *SQLite) CreateDevice(ctx context.Context, d Device) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO devices (id, sign_pub, box_pub, created_at) VALUES (?, ?, ?, ?)`,
		d.ID, d.SignPub, d.BoxPub, d.CreatedAt)
	if isUnique(err) {
		return ErrConflict
	}
	return err
}

// Device implements Storage.
func (s *SQLite) Device(ctx context.Context, id string) (Device, error) {
	s.devMu.RLock()
	d, ok := s.devices[id]
	gen := s.devGen
	s.devMu.RUnlock()
	if ok {
		return d, nil
	}
	d = Device{ID: id}
	err := s.device.QueryRowContext(ctx, id).Scan(&d.SignPub, &d.BoxPub, &d.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return d, ErrNotFound
	}
	if err != nil {
		return d, err
	}
	s.devMu.Lock()
	if s.devGen == gen {
		if len(s.devices) >= maxCachedDevices {
			clear(s.devices)
		}
		s.devices[id] = d
	}
	s.devMu.Unlock()
	return d, nil
}

// maxCachedDevices bounds the device cache; when full it starts again empty.
const maxCachedDevices = 1 << 16

func (s *SQLite) forgetDevice(id string) {
	s.devMu.Lock()
	delete(s.devices, id)
	s.devGen++
	s.devMu.Unlock()
}

// DeleteDevice implements Storage.
func (s *SQLite) DeleteDevice(ctx context.Context, id string) ([]string, error) {
	var chans []string
	defer s.forgetDevice(id) // after the commit: a lookup from before it caches nothing
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM devices WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		rows, err := tx.QueryContext(ctx, `SELECT id FROM channels WHERE device = ? ORDER BY id`, id)
		if err != nil {
			return err
		}
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				rows.Close()
				return err
			}
			chans = append(chans, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, c := range chans {
			for _, q := range []string{`DELETE FROM peers WHERE channel = ?`, `DELETE FROM mailbox WHERE channel = ?`} {
				if _, err := tx.ExecContext(ctx, q, c); err != nil {
					return err
				}
			}
		}
		for _, q := range []string{`DELETE FROM channels WHERE device = ?`, `DELETE FROM store_values WHERE device = ?`,
			`DELETE FROM store_ns WHERE device = ?`, `DELETE FROM store_usage WHERE device = ?`, `DELETE FROM auth_nonces WHERE device = ?`} {
			if _, err := tx.ExecContext(ctx, q, id); err != nil {
				return err
			}
		}
		return nil
	})
	return chans, err
}

// UseNonce implements Storage.
func (s *SQLite) UseNonce(ctx context.Context, device, nonce string, until, now int64) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		var u int64
		err := tx.QueryRowContext(ctx, `SELECT until_ms FROM auth_nonces WHERE device = ? AND nonce = ?`, device, nonce).Scan(&u)
		switch {
		case err == nil && u > now:
			return ErrConflict
		case err != nil && !errors.Is(err, sql.ErrNoRows):
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO auth_nonces (device, nonce, until_ms) VALUES (?, ?, ?)
			ON CONFLICT (device, nonce) DO UPDATE SET until_ms = excluded.until_ms`, device, nonce, until)
		return err
	})
}

// StoreList implements Storage.
func (s *SQLite) StoreList(ctx context.Context, ns Namespace, prefix, after string, limit int, now int64) ([]StoreItem, error) {
	// Prefix match by range, not LIKE: keys may contain '_' which LIKE treats as a wildcard.
	// Store keys are ASCII below '~', so prefix + "~" bounds every key with that prefix.
	lo := after
	if prefix > lo {
		lo = prefix
	}
	rows, err := s.rd.QueryContext(ctx, `SELECT k, version, updated_at FROM store_values
		WHERE device = ? AND plugin = ? AND k >= ? AND k > ? AND k < ? AND (expires_at = 0 OR expires_at > ?)
		ORDER BY k LIMIT ?`, ns.Device, ns.Plugin, lo, after, prefix+"~", now, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []StoreItem
	for rows.Next() {
		var it StoreItem
		if err := rows.Scan(&it.Key, &it.Version, &it.UpdatedAt); err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, rows.Err()
}

// StoreGet implements Storage.
func (s *SQLite) StoreGet(ctx context.Context, ns Namespace, key string, now int64) (StoreItem, error) {
	it := StoreItem{Key: key}
	var v []byte
	err := s.get.QueryRowContext(ctx, ns.Device, ns.Plugin, key, now).Scan(&v, &it.Version, &it.UpdatedAt, &it.ExpiresAt)
	if errors.Is(err, sql.ErrNoRows) {
		return it, ErrNotFound
	}
	it.Value = json.RawMessage(v)
	return it, err
}

// StorePut implements Storage. The writer goroutine runs it, group-committed with other puts.
func (s *SQLite) StorePut(ctx context.Context, ns Namespace, it StoreItem, ifMatch *int64, q StoreQuota, now int64) (int64, error) {
	return s.do(&storeOp{ctx: ctx, ns: ns, it: it, ifMatch: ifMatch, q: q, now: now})
}

// StoreDelete implements Storage. The writer goroutine runs it, group-committed with puts.
func (s *SQLite) StoreDelete(ctx context.Context, ns Namespace, key string, now int64) error {
	_, err := s.do(&storeOp{ctx: ctx, ns: ns, it: StoreItem{Key: key}, now: now, del: true})
	return err
}

func (s *SQLite) putTx(ctx context.Context, tx *sql.Tx, op *storeOp) (int64, error) {
	ns, it, now := op.ns, op.it, op.now
	// The key's row, if any, and the namespace's usage (0 when it has none) in one query.
	var cur, oldSize, exp sql.NullInt64
	var n, bytes int64
	var dev deviceUsage
	err := tx.StmtContext(ctx, s.cur).QueryRowContext(ctx, ns.Device, ns.Plugin, it.Key).
		Scan(&cur, &oldSize, &exp, &n, &bytes, &dev.plugins, &dev.bytes, &dev.here)
	if err != nil {
		return 0, err
	}
	var version int64
	if cur.Valid && (exp.Int64 == 0 || exp.Int64 > now) {
		version = cur.Int64 // live; otherwise absent or expired: 0
	}
	if op.ifMatch != nil && *op.ifMatch != version {
		return 0, ErrConflict
	}
	// The other keys by store_usage, which counts expired rows too: an upper bound.
	if cur.Valid {
		n, bytes = n-1, bytes-oldSize.Int64
	}
	size := int64(len(it.Key) + len(it.Value))
	if n+1 > op.q.MaxKeys || bytes+size > op.q.MaxBytes {
		// Over by the bound: count the live keys exactly.
		if err := tx.StmtContext(ctx, s.live).QueryRowContext(ctx, ns.Device, ns.Plugin, it.Key, now).Scan(&n, &bytes); err != nil {
			return 0, err
		}
		if n+1 > op.q.MaxKeys {
			return 0, &QuotaError{Limit: fmt.Sprintf("%d keys", op.q.MaxKeys)}
		}
		if bytes+size > op.q.MaxBytes {
			return 0, &QuotaError{Limit: fmt.Sprintf("%d bytes", op.q.MaxBytes)}
		}
	}
	if err := s.deviceQuotaTx(ctx, tx, op, dev, cur.Valid, oldSize.Int64, size); err != nil {
		return 0, err
	}
	if err := tx.StmtContext(ctx, s.seq).QueryRowContext(ctx, ns.Device, ns.Plugin).Scan(&version); err != nil {
		return 0, err
	}
	_, err = tx.StmtContext(ctx, s.put).ExecContext(ctx, ns.Device, ns.Plugin, it.Key, string(it.Value), size, version, now, it.ExpiresAt)
	if err != nil {
		return 0, err
	}
	return version, nil
}

// deviceUsage is a device's store by store_usage: namespaces with rows, their bytes, and
// whether the put's namespace is one of them (1 or 0).
type deviceUsage struct{ plugins, bytes, here int64 }

// deviceQuotaTx checks a put against op.q.Device: first by store_usage (dev, read with the
// key's row; expired rows included, so an upper bound), and only when that is over, by an exact
// count of the device's live rows. hadRow and oldSize describe the key's current row, size the
// new one.
func (s *SQLite) deviceQuotaTx(ctx context.Context, tx *sql.Tx, op *storeOp, dev deviceUsage, hadRow bool, oldSize, size int64) error {
	if op.q.Device == (DeviceStoreLimits{}) {
		return nil
	}
	ns := op.ns
	plugins, bytes, here := dev.plugins, dev.bytes, dev.here
	if hadRow {
		bytes -= oldSize
	}
	if here == 0 {
		plugins++
	}
	if deviceQuota(op.q, plugins, bytes+size) == nil {
		return nil
	}
	if err := tx.StmtContext(ctx, s.devLive).QueryRowContext(ctx, ns.Plugin, ns.Device, ns.Plugin, op.it.Key, op.now).Scan(&plugins, &bytes, &here); err != nil {
		return err
	}
	if here == 0 {
		plugins++
	}
	return deviceQuota(op.q, plugins, bytes+size)
}

func (s *SQLite) deleteTx(ctx context.Context, tx *sql.Tx, op *storeOp) error {
	res, err := tx.StmtContext(ctx, s.drop).ExecContext(ctx, op.ns.Device, op.ns.Plugin, op.it.Key, op.now)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// CreateChannel implements Storage.
func (s *SQLite) CreateChannel(ctx context.Context, c Channel, maxOpen int, now int64) error {
	meta, err := json.Marshal(c.Meta)
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM channels WHERE device = ? AND status = 'open' AND expires_at > ?`,
			c.Device, now).Scan(&n); err != nil {
			return err
		}
		if n >= maxOpen {
			return &QuotaError{Limit: fmt.Sprintf("%d open channels", maxOpen)}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO channels (id, device, plugin, join_hash, chan_pub, meta, max_peers, page,
			status, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'open', ?, ?)`,
			c.ID, c.Device, c.Plugin, c.JoinHash, c.ChanPub, string(meta), c.MaxPeers, c.Page, c.CreatedAt, c.ExpiresAt)
		if isUnique(err) {
			return ErrConflict
		}
		return err
	})
}

// Channel implements Storage.
func (s *SQLite) Channel(ctx context.Context, id string) (Channel, error) {
	c := Channel{ID: id}
	var meta string
	err := s.rd.QueryRowContext(ctx, `SELECT device, plugin, join_hash, chan_pub, meta, max_peers, page, status,
		created_at, expires_at FROM channels WHERE id = ?`, id).Scan(&c.Device, &c.Plugin, &c.JoinHash, &c.ChanPub,
		&meta, &c.MaxPeers, &c.Page, &c.Status, &c.CreatedAt, &c.ExpiresAt)
	if errors.Is(err, sql.ErrNoRows) {
		return c, ErrNotFound
	}
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal([]byte(meta), &c.Meta); err != nil {
		return c, fmt.Errorf("channel %s: meta: %w", id, err)
	}
	rows, err := s.rd.QueryContext(ctx, `SELECT peer_id, pub, token_hash, joined_at FROM peers WHERE channel = ? ORDER BY joined_at, peer_id`, id)
	if err != nil {
		return c, err
	}
	defer rows.Close()
	for rows.Next() {
		var p Peer
		if err := rows.Scan(&p.ID, &p.Pub, &p.TokenHash, &p.JoinedAt); err != nil {
			return c, err
		}
		c.Peers = append(c.Peers, p)
	}
	return c, rows.Err()
}

// SetChannelExpiry implements Storage.
func (s *SQLite) SetChannelExpiry(ctx context.Context, id string, expiresAt int64) error {
	_, err := s.db.ExecContext(ctx, `UPDATE channels SET expires_at = ? WHERE id = ?`, expiresAt, id)
	return err
}

// SetChannelStatus implements Storage.
func (s *SQLite) SetChannelStatus(ctx context.Context, id, status string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		for _, q := range []string{`DELETE FROM peers WHERE channel = ?`, `DELETE FROM mailbox WHERE channel = ?`} {
			if _, err := tx.ExecContext(ctx, q, id); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `UPDATE channels SET status = ? WHERE id = ?`, status, id)
		return err
	})
}

// AddPeer implements Storage.
func (s *SQLite) AddPeer(ctx context.Context, channel string, p Peer, maxPeers int) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM channels WHERE id = ?`, channel).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return ErrNotFound
		}
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM peers WHERE channel = ?`, channel).Scan(&n); err != nil {
			return err
		}
		if n >= maxPeers {
			return ErrConflict
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO peers (channel, peer_id, pub, token_hash, joined_at) VALUES (?, ?, ?, ?, ?)`,
			channel, p.ID, p.Pub, p.TokenHash, p.JoinedAt)
		return err
	})
}

// RemovePeer implements Storage.
func (s *SQLite) RemovePeer(ctx context.Context, channel, peerID string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM peers WHERE channel = ? AND peer_id = ?`, channel, peerID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// PeerByToken implements Storage.
func (s *SQLite) PeerByToken(ctx context.Context, tokenHash string) (string, Peer, error) {
	var ch string
	p := Peer{TokenHash: tokenHash}
	err := s.rd.QueryRowContext(ctx, `SELECT channel, peer_id, pub, joined_at FROM peers WHERE token_hash = ?`, tokenHash).
		Scan(&ch, &p.ID, &p.Pub, &p.JoinedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return "", p, ErrNotFound
	}
	return ch, p, err
}

// MailboxPut implements Storage.
func (s *SQLite) MailboxPut(ctx context.Context, channel string, it MailboxItem, maxSlots int, now int64) error {
	env, err := json.Marshal(it.Env)
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM mailbox WHERE channel = ? AND slot <> ? AND expires_at > ?`,
			channel, it.Slot, now).Scan(&n); err != nil {
			return err
		}
		if n >= maxSlots {
			return &QuotaError{Limit: fmt.Sprintf("%d mailbox slots", maxSlots)}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO mailbox (channel, slot, env, expires_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (channel, slot) DO UPDATE SET env = excluded.env, expires_at = excluded.expires_at`,
			channel, it.Slot, string(env), it.ExpiresAt)
		return err
	})
}

// MailboxDelete implements Storage.
func (s *SQLite) MailboxDelete(ctx context.Context, channel, slot string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM mailbox WHERE channel = ? AND slot = ?`, channel, slot)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// MailboxClear implements Storage.
func (s *SQLite) MailboxClear(ctx context.Context, channel string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM mailbox WHERE channel = ?`, channel)
	return err
}

// MailboxList implements Storage.
func (s *SQLite) MailboxList(ctx context.Context, channel string, now int64) ([]MailboxItem, error) {
	rows, err := s.rd.QueryContext(ctx, `SELECT slot, env, expires_at FROM mailbox WHERE channel = ? AND expires_at > ? ORDER BY slot`, channel, now)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []MailboxItem{}
	for rows.Next() {
		var it MailboxItem
		var env string
		if err := rows.Scan(&it.Slot, &env, &it.ExpiresAt); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(env), &it.Env); err != nil {
			return nil, fmt.Errorf("mailbox %s/%s: %w", channel, it.Slot, err)
		}
		out = append(out, it)
	}
	return out, rows.Err()
}

// Secret implements Storage.
func (s *SQLite) Secret(ctx context.Context, name string) ([]byte, error) {
	var v string
	err := s.tx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT v FROM secrets WHERE name = ?`, name).Scan(&v)
		if err == nil || !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return err
		}
		v = protocol.B64.EncodeToString(b)
		_, err = tx.ExecContext(ctx, `INSERT INTO secrets (name, v) VALUES (?, ?)`, name, v)
		return err
	})
	if err != nil {
		return nil, err
	}
	return protocol.B64.DecodeString(v)
}

// channelRetentionMs is how long a channel's record outlives its expiry, so that GET /v1/c/{id}
// can still answer "closed" or "expired" to a late viewer.
const channelRetentionMs = 24 * 60 * 60 * 1000

// Sweep implements Storage.
func (s *SQLite) Sweep(ctx context.Context, now int64) error {
	old := now - channelRetentionMs
	for _, q := range []string{
		`DELETE FROM peers WHERE channel IN (SELECT id FROM channels WHERE expires_at <= ?)`,
		`DELETE FROM mailbox WHERE channel IN (SELECT id FROM channels WHERE expires_at <= ?)`,
		`DELETE FROM channels WHERE expires_at <= ?`,
	} {
		if _, err := s.db.ExecContext(ctx, q, old); err != nil {
			return err
		}
	}
	for _, q := range []string{
		`DELETE FROM store_values WHERE expires_at <> 0 AND expires_at <= ?`,
		`DELETE FROM auth_nonces WHERE until_ms <= ?`,
		`DELETE FROM mailbox WHERE expires_at <= ?`,
	} {
		if _, err := s.db.ExecContext(ctx, q, now); err != nil {
			return err
		}
	}
	return nil
}
