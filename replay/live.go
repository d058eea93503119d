package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing/fstest"
	"time"

	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/plugin"
)

// Recording is a live run being recorded as a recorded test (the author
// CLI's `plugin run --record`): Transport goes under the run (every reply is
// kept, and every request that got none is noted), Now is the run's fixed
// clock, and Save writes the test once the run ended.
type Recording struct {
	rec   *Recorder
	lost  *lostReplies
	start time.Time
}

// NewRecording starts a recording over the real transport next, with the
// run's clock fixed at start.
func NewRecording(next http.RoundTripper, start time.Time) *Recording {
	lost := &lostReplies{next: next}
	return &Recording{rec: &Recorder{Next: lost}, lost: lost, start: start}
}

// Transport is the transport the recorded run must use.
func (r *Recording) Transport() http.RoundTripper { return r.rec }

// Now is the recorded run's clock: the start time, always.
func (r *Recording) Now() time.Time { return r.start }

// Save writes the run of tool with input, which gave result or runErr, as a
// recorded test in file (see writeRecording) and returns how many replies it
// holds. A recording that would not pass when replayed is a *NotReplayable
// and nothing is written.
func (r *Recording) Save(ctx context.Context, p *plugin.Plugin, file, tool string, input, result any, runErr error) (int, error) {
	t := RecordedTest{
		Name: "recorded " + r.start.In(time.FixedZone("CST", 8*3600)).Format("2006-01-02 15:04"),
		Tool: tool, Input: input, Now: r.start, Exchanges: r.rec.Exchanges(), Result: result, Err: runErr,
	}
	if err := writeRecording(ctx, p, file, t, r.lost.list()); err != nil {
		return 0, err
	}
	return len(t.Exchanges), nil
}

// lostReplies is the transport under a Recording's Recorder: it notes each request that got
// no reply (a refused connection, a DNS failure, a timeout), which a recorded test cannot replay.
type lostReplies struct {
	next http.RoundTripper
	mu   sync.Mutex
	errs []string
}

// RoundTrip implements http.RoundTripper.
func (l *lostReplies) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(req)
	if err != nil {
		l.mu.Lock()
		l.errs = append(l.errs, fmt.Sprintf("%s %s: %v", req.Method, req.URL.Redacted(), err))
		l.mu.Unlock()
	}
	return resp, err
}

func (l *lostReplies) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.errs...)
}

// NotReplayable is Recording.Save's refusal of a recording that would fail
// when replayed; Why says what made it so.
type NotReplayable struct{ Why string }

// Error says that nothing was written, and why.
func (e *NotReplayable) Error() string {
	return "not written: " + e.Why + "; a recorded test replays the replies a run received, so it would never pass"
}

// writeRecording saves a live run as a recorded test in file (a tests/*.yaml path): a new file,
// or one more document appended after `---`. Bodies that are not short UTF-8 text go to side
// files beside it, named after it ("free-1.html"). Before anything is written the test is
// decoded and replayed against p (RunCase): a recording that would not pass — a failing
// run whose error came from a request that got no reply (lost lists them), from a campus
// request or ability the live run refuses, or from anything else the recording cannot
// reproduce — is refused with a *NotReplayable saying why, and no file is touched.
func writeRecording(ctx context.Context, p *plugin.Plugin, file string, t RecordedTest, lost []string) error {
	if t.Err != nil && len(lost) > 0 {
		return &NotReplayable{Why: "the run failed on a request that got no reply (" + strings.Join(lost, "; ") + ")"}
	}
	var ie *interp.Error
	if errors.As(t.Err, &ie) && (ie.Kind == interp.KindAbility || ie.Kind == interp.KindSession) {
		return &NotReplayable{Why: "the run failed on a campus request or an ability, which `plugin run` refuses and cannot record (write their replies in the test by hand: campus: / abilities:)"}
	}
	dir := filepath.Dir(file)
	base := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	side := map[string][]byte{}
	data, err := EncodeTest(t, func(i int, ext string, body []byte) (string, error) {
		name := fmt.Sprintf("%s-%d%s", base, i, ext)
		for n := 2; ; n++ { // never overwrite an earlier recording's file
			if _, err := os.Stat(filepath.Join(dir, name)); errors.Is(err, os.ErrNotExist) {
				break
			}
			name = fmt.Sprintf("%s-%d-%d%s", base, i, n, ext)
		}
		side[name] = body
		return name, nil
	})
	if err != nil {
		return err
	}
	// Replay what would be written.
	fsys := fstest.MapFS{}
	for name, body := range side {
		fsys["tests/"+name] = &fstest.MapFile{Data: body}
	}
	cases, err := Decode(fsys, "tests/"+filepath.Base(file), file, data)
	if err != nil {
		return fmt.Errorf("the recording does not decode (a bug): %w", err)
	}
	for _, c := range cases {
		if o := RunCase(ctx, p, c); !o.Passed {
			return &NotReplayable{Why: "replayed, the recording fails: " + strings.Join(o.Problems, "; ")}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, body := range side {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
			return err
		}
	}
	old, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if len(bytes.TrimSpace(old)) > 0 {
		if !bytes.HasSuffix(old, []byte("\n")) {
			old = append(old, '\n')
		}
		data = append(append(old, "---\n"...), data...)
	}
	return os.WriteFile(file, data, 0o644)
}
