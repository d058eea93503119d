package host

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/plugin"
)

func TestDataSource(t *testing.T) {
	e := newEnv(t, demo("1.0.0"))
	ctx := context.Background()
	e.install(t, link)
	e.h.SetMode(ctx, "demo", plugin.EffectRead, ModeAuto)
	t0 := e.clock.now()
	type step struct {
		name      string
		advance   time.Duration
		fail      bool
		refresh   bool
		fetchedAt time.Time
		stale     bool
		errPart   string
		calls     int64 // requests the weather API has seen in all
	}
	steps := []step{
		{name: "first read fetches", fetchedAt: t0, calls: 1},
		{name: "fresh value is cached", advance: 5 * time.Minute, fetchedAt: t0, calls: 1},
		{name: "refresh forces a run", refresh: true, fetchedAt: t0.Add(5 * time.Minute), calls: 2},
		{name: "past ttl with the site down: stale", advance: 11 * time.Minute, fail: true, fetchedAt: t0.Add(5 * time.Minute), stale: true, errPart: "503", calls: 3},
		{name: "site back: fresh again", fetchedAt: t0.Add(16 * time.Minute), calls: 4},
	}
	for _, s := range steps {
		e.clock.add(s.advance)
		e.weather.fail.Store(s.fail)
		v, err := e.h.DataSource(ctx, "demo", "weather", s.refresh)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if jsonOf(t, v.Value) != `{"city":"北京","temp":21}` || !v.FetchedAt.Equal(s.fetchedAt) || v.Stale != s.stale ||
			!strings.Contains(v.Error, s.errPart) || (s.errPart == "" && v.Error != "") || e.weather.calls.Load() != s.calls {
			t.Fatalf("%s: %s fetched %v stale %v error %q after %d calls", s.name, jsonOf(t, v.Value), v.FetchedAt, v.Stale, v.Error, e.weather.calls.Load())
		}
	}
	_, err := e.h.DataSource(ctx, "demo", "nope", false)
	var nf *NotFound
	if !errors.As(err, &nf) || err.Error() != `host: plugin demo has no data source "nope"` {
		t.Fatalf("unknown source: %v", err)
	}
	// Nothing cached and the site down: the run's error.
	e.db.SQL.Exec(`DELETE FROM datasource_cache`)
	e.weather.fail.Store(true)
	if _, err := e.h.DataSource(ctx, "demo", "weather", false); err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("nothing cached, site down: %v", err)
	}
}
