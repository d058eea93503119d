package expr

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/pkuinfo/harness/lang/internal/workcount"
)

// Costs of the engine's own walks over values (docs/DECISIONS.md §2 "Costs"): encoding to JSON,
// text of a list or object (str, `+`, templates, join), deep comparison and hashing. A value may
// share sub-values (reduce((acc) => [acc, acc]) builds 2^n nodes in n steps), so a walk is
// charged for what it visits, not for what the value cost to build.
const (
	// WalkNodesPerOp is how many values a walk visits per operation charged.
	WalkNodesPerOp = 16
	// WalkBytesPerOp is how many bytes a walk writes per operation charged: half a KB, since
	// the output buffer grows by doubling and so allocates about twice what it holds.
	WalkBytesPerOp = 512
	// MaxText is the longest text a walk writes, in bytes (the JSON or text of one value; a
	// run's result is limited to 1 MB besides).
	MaxText = 16 << 20
)

// Charger spends operations of a run's budget: *Budget and *Call are Chargers. An error stops
// the work that asked.
type Charger interface {
	Charge(n int) error
}

// ContextCharger returns a Charger that fails with the context's error once ctx is done and
// charges ch (which may be nil) otherwise, so that a walk charged through it also stops when
// the run is cancelled or out of time.
func ContextCharger(ctx context.Context, ch Charger) Charger {
	return &ctxCharger{ctx: ctx, ch: ch}
}

type ctxCharger struct {
	ctx context.Context
	ch  Charger
}

func (c *ctxCharger) Charge(n int) error {
	if err := c.ctx.Err(); err != nil {
		return &RuntimeError{Kind: "limit", Msg: "evaluation stopped: " + err.Error(), err: err}
	}
	if c.ch == nil {
		return nil
	}
	return c.ch.Charge(n)
}

// ErrTooLarge is the cause (errors.Is) of every *SizeError.
var ErrTooLarge = errors.New("value too large")

// SizeError is returned by a walk whose output would pass its limit. Its message is
// "the text would be more than 1048576 bytes, the limit is 1048576".
type SizeError struct{ Limit int }

// Error returns the message naming the limit in bytes.
func (e *SizeError) Error() string {
	return fmt.Sprintf("the text would be more than %d bytes, the limit is %d", e.Limit, e.Limit)
}

// Is makes errors.Is(err, ErrTooLarge) true.
func (e *SizeError) Is(target error) bool { return target == ErrTooLarge }

// meter charges one walk: a node count and the bytes paid for so far.
type meter struct {
	ch    Charger
	limit int
	nodes int
	paid  int // bytes already paid for
}

func (m *meter) init(ch Charger, limit int) {
	if limit <= 0 {
		limit = MaxText
	}
	m.ch, m.limit = ch, limit
}

// node pays for visiting one more value: one operation before every WalkNodesPerOp-th.
func (m *meter) node() error {
	workcount.Add(1)
	m.nodes++
	if m.nodes%WalkNodesPerOp == 0 && m.ch != nil {
		return m.ch.Charge(1)
	}
	return nil
}

// nodesN pays for visiting n more values at once.
func (m *meter) nodesN(n int) error {
	workcount.Add(n)
	before := m.nodes / WalkNodesPerOp
	m.nodes += n
	if k := m.nodes/WalkNodesPerOp - before; k > 0 && m.ch != nil {
		return m.ch.Charge(k)
	}
	return nil
}

// paidBytes pays for an output of total bytes: one operation per whole WalkBytesPerOp not yet
// paid for.
func (m *meter) paidBytes(total int) error {
	if k := total/WalkBytesPerOp - m.paid/WalkBytesPerOp; k > 0 {
		workcount.Add((total - m.paid) / 64)
		m.paid = total
		if m.ch != nil {
			return m.ch.Charge(k)
		}
	}
	return nil
}

// CompareStrings is strings.Compare charged to ch: one operation per KB of common prefix, before
// comparing that KB, so comparing (or sorting) long texts that differ late is paid for. ch nil
// charges nothing.
func CompareStrings(a, b string, ch Charger) (int, error) {
	for len(a) > WalkBytesPerOp && len(b) > WalkBytesPerOp {
		if ch != nil {
			if err := ch.Charge(1); err != nil {
				return 0, err
			}
		}
		workcount.Add(WalkBytesPerOp / 64)
		if a[:WalkBytesPerOp] != b[:WalkBytesPerOp] {
			break
		}
		a, b = a[WalkBytesPerOp:], b[WalkBytesPerOp:]
	}
	return strings.Compare(a, b), nil
}
