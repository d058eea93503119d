package host

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/plugin"
)

// DataValue is one data source's value as the dashboard reads it (seed 004
// "Optional fields": dataSources add live data; docs/HOST-API.md "Plugins"):
// the value, when it was fetched, and whether it is past its ttl. Error is
// set when a refresh failed and an older value is returned instead.
type DataValue struct {
	Plugin    string    `json:"plugin"`
	Source    string    `json:"source"`
	Value     any       `json:"-"` // an expr value; ValueJSON for the wire
	FetchedAt time.Time `json:"fetchedAt"`
	Stale     bool      `json:"stale"`
	Error     string    `json:"error,omitempty"`
}

// DataSource returns the value of one of a plugin's dataSources. A cached
// value younger than the source's ttl is returned as it is; otherwise (or
// with refresh) the source's tool runs as the user with the source's args
// and the value is cached, keyed by plugin, source and the args' JSON. When
// the tool fails and an older value is cached, that value comes back with
// Stale true and Error set; with nothing cached the run's error is
// returned. A server-function source (fn) runs that function on the Cloud
// provider through Call (tool "fn:NAME", FunctionPrefix), consent-gated as
// every Cloud call of the plugin (seed 003 "服务端函数").
func (h *Host) DataSource(ctx context.Context, pluginID, name string, refresh bool) (*DataValue, error) {
	p, err := h.Plugin(ctx, pluginID)
	if err != nil {
		return nil, err
	}
	var ds *plugin.DataSource
	for _, d := range p.Manifest.DataSources {
		if d.Name == name {
			ds = d
		}
	}
	if ds == nil {
		return nil, &NotFound{What: fmt.Sprintf("plugin %s has no data source %q", pluginID, name)}
	}
	tool := ds.Tool
	if tool == "" {
		tool = FunctionPrefix + ds.Fn // a server function, run on the Cloud provider (function.go)
	}
	argsJSON, err := expr.ToJSON(ds.Args, "")
	if err != nil {
		return nil, fmt.Errorf("host: data source %s.%s: args: %w", pluginID, name, err)
	}
	now := h.now()
	var (
		cached          []byte
		fetched, expire int64
	)
	err = h.db.SQL.QueryRowContext(ctx, `SELECT value, fetched_at, expires_at FROM datasource_cache WHERE plugin = ? AND source = ? AND args = ?`,
		pluginID, name, string(argsJSON)).Scan(&cached, &fetched, &expire)
	have := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("host: data source %s.%s: %w", pluginID, name, err)
	}
	out := &DataValue{Plugin: pluginID, Source: name}
	if have && !refresh && now.UnixMilli() < expire {
		v, err := expr.FromJSON(cached)
		if err != nil {
			return nil, fmt.Errorf("host: data source %s.%s: cached value: %w", pluginID, name, err)
		}
		out.Value, out.FetchedAt = v, time.UnixMilli(fetched).UTC()
		return out, nil
	}
	var input any = expr.NewObject(0)
	if ds.Args != nil {
		input = ds.Args
	}
	res, runErr := h.Call(ctx, CallRequest{Actor: ActorUser, Plugin: pluginID, Tool: tool, Input: input})
	if runErr != nil {
		if !have {
			return nil, runErr
		}
		v, err := expr.FromJSON(cached)
		if err != nil {
			return nil, fmt.Errorf("host: data source %s.%s: cached value: %w", pluginID, name, err)
		}
		out.Value, out.FetchedAt, out.Stale, out.Error = v, time.UnixMilli(fetched).UTC(), true, runErr.Error()
		return out, nil
	}
	b, err := expr.ToJSON(res.Value, "")
	if err != nil {
		return nil, fmt.Errorf("host: data source %s.%s: %w", pluginID, name, err)
	}
	if _, err := h.db.SQL.ExecContext(ctx, `INSERT INTO datasource_cache (plugin, source, args, value, fetched_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (plugin, source, args) DO UPDATE SET value = excluded.value, fetched_at = excluded.fetched_at, expires_at = excluded.expires_at`,
		pluginID, name, string(argsJSON), b, now.UnixMilli(), now.Add(ds.TTL).UnixMilli()); err != nil {
		return nil, fmt.Errorf("host: data source %s.%s: %w", pluginID, name, err)
	}
	out.Value, out.FetchedAt = res.Value, time.UnixMilli(now.UnixMilli()).UTC()
	return out, nil
}
