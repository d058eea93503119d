package plugin

import "fmt"

// Effect is what a tool or a host-ability operation may do (seed "Tools": read, write, money,
// public). Effects are partially ordered: EffectRead < EffectWrite < EffectMoney and
// EffectRead < EffectWrite < EffectPublic; EffectMoney and EffectPublic are incomparable
// (docs/DECISIONS.md §6). The zero value is not a valid effect.
type Effect int

// The four effects of the seed.
const (
	EffectRead Effect = iota + 1
	EffectWrite
	EffectMoney
	EffectPublic
)

// Effects lists every effect in declaration order.
var Effects = []Effect{EffectRead, EffectWrite, EffectMoney, EffectPublic}

// ParseEffect reads "read", "write", "money" or "public". Any other text is an error that lists
// the four names.
func ParseEffect(s string) (Effect, error) {
	switch s {
	case "read":
		return EffectRead, nil
	case "write":
		return EffectWrite, nil
	case "money":
		return EffectMoney, nil
	case "public":
		return EffectPublic, nil
	}
	return 0, fmt.Errorf("unknown effect %q (use read, write, money or public)", s)
}

// String returns the effect's name as written in YAML ("read" …), or "effect(N)" for an invalid
// value.
func (e Effect) String() string {
	switch e {
	case EffectRead:
		return "read"
	case EffectWrite:
		return "write"
	case EffectMoney:
		return "money"
	case EffectPublic:
		return "public"
	}
	return fmt.Sprintf("effect(%d)", int(e))
}

// AtLeast reports whether e is at least as strong as other in the partial order, that is whether
// a tool declaring e may do something whose effect is other. Money and public are incomparable:
// EffectMoney.AtLeast(EffectPublic) and EffectPublic.AtLeast(EffectMoney) are both false. Invalid
// effects are at least nothing and nothing is at least them.
func (e Effect) AtLeast(other Effect) bool {
	if !e.valid() || !other.valid() {
		return false
	}
	if e == other || other == EffectRead {
		return true
	}
	if other == EffectWrite {
		return e == EffectMoney || e == EffectPublic
	}
	return false
}

func (e Effect) valid() bool { return e >= EffectRead && e <= EffectPublic }

// MarshalText writes the effect's name, so effects print as "read" in JSON.
func (e Effect) MarshalText() ([]byte, error) {
	if !e.valid() {
		return nil, fmt.Errorf("invalid effect %d", int(e))
	}
	return []byte(e.String()), nil
}

// UnmarshalText reads an effect's name (see ParseEffect).
func (e *Effect) UnmarshalText(b []byte) error {
	v, err := ParseEffect(string(b))
	if err != nil {
		return err
	}
	*e = v
	return nil
}
