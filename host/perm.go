package host

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/pkuinfo/harness/plugin"
)

// Actor is who asks for a tool call (docs/HOST-API.md "Tools and permissions"; seed 003
// "工具与 schema"): a person's own tap, the assistant, or a scheduled task.
type Actor string

// The three actors.
const (
	// ActorUser is a person's own tap: permissions apply, but an ask mode
	// does not prompt, since the tap is the answer (seed 003: invoke runs
	// tools "以用户身份 … 不会弹出授权确认").
	ActorUser Actor = "user"
	// ActorAgent is the assistant: ask modes return a Confirmation,
	// userOnly tools are refused, untrusted results taint the turn.
	ActorAgent Actor = "agent"
	// ActorScheduler is a scheduled task run by `harness serve`: nobody is
	// there to answer, so ask is refused like deny; userOnly is refused.
	ActorScheduler Actor = "scheduler"
)

// ParseActor reads "user", "agent" or "scheduler".
func ParseActor(s string) (Actor, error) {
	switch a := Actor(s); a {
	case ActorUser, ActorAgent, ActorScheduler:
		return a, nil
	}
	return "", fmt.Errorf("unknown actor %q (use user, agent or scheduler)", s)
}

// Mode is a plugin's permission mode for one effect (docs/HOST-API.md
// "Tools and permissions"): ModeAuto runs without asking, ModeAsk asks the user
// first when the agent calls, ModeDeny refuses every actor.
type Mode string

// The three modes.
const (
	ModeAuto Mode = "auto"
	ModeAsk  Mode = "ask"
	ModeDeny Mode = "deny"
)

// ParseMode reads "auto", "ask" or "deny"; "off", the word a manifest's
// defaultModes uses, reads as deny.
func ParseMode(s string) (Mode, error) {
	switch s {
	case "auto", "ask", "deny":
		return Mode(s), nil
	case "off":
		return ModeDeny, nil
	}
	return "", fmt.Errorf("unknown mode %q (use auto, ask or deny)", s)
}

// strictness orders modes: auto < ask < deny.
func (m Mode) strictness() int {
	switch m {
	case ModeAuto:
		return 0
	case ModeAsk:
		return 1
	}
	return 2
}

// DefaultModes returns the starting mode of each effect for a plugin (seed
// 004 "Install links"; docs/HOST-API.md "Tools and permissions"): an Official plugin takes its defaultModes,
// and read auto, the rest ask for effects it does not name; a Community
// plugin starts with read auto and write, money and public at ask, and its
// defaultModes may only make a mode stricter.
func DefaultModes(m *plugin.Manifest, official bool) map[plugin.Effect]Mode {
	modes := map[plugin.Effect]Mode{
		plugin.EffectRead: ModeAuto, plugin.EffectWrite: ModeAsk,
		plugin.EffectMoney: ModeAsk, plugin.EffectPublic: ModeAsk,
	}
	for _, d := range m.DefaultModes {
		mode, err := ParseMode(d.Mode)
		if err != nil {
			continue // the validator reports it
		}
		if official || mode.strictness() > modes[d.Effect].strictness() {
			modes[d.Effect] = mode
		}
	}
	return modes
}

// Modes returns the permission mode of each effect for an installed plugin
// or remote plugin.
func (h *Host) Modes(ctx context.Context, id string) (map[plugin.Effect]Mode, error) {
	if _, err := h.record(ctx, h.db.SQL, id); err != nil {
		if isNotFound(err) && h.remotes != nil {
			if p, rerr := h.remotes.Get(ctx, id); rerr == nil {
				return p.Modes, nil
			}
		}
		return nil, err
	}
	rows, err := h.db.SQL.QueryContext(ctx, `SELECT effect, mode FROM modes WHERE plugin = ?`, id)
	if err != nil {
		return nil, fmt.Errorf("host: modes of %s: %w", id, err)
	}
	defer rows.Close()
	out := map[plugin.Effect]Mode{}
	for rows.Next() {
		var e, m string
		if err := rows.Scan(&e, &m); err != nil {
			return nil, err
		}
		eff, err := plugin.ParseEffect(e)
		if err != nil {
			return nil, fmt.Errorf("host: modes of %s: %w", id, err)
		}
		out[eff] = Mode(m)
	}
	for _, e := range plugin.Effects {
		if _, ok := out[e]; !ok {
			out[e] = ModeAsk // a row lost to a bug never opens a door
		}
	}
	return out, rows.Err()
}

// SetMode sets the mode of one effect for an installed plugin.
func (h *Host) SetMode(ctx context.Context, id string, e plugin.Effect, m Mode) error {
	if _, err := ParseMode(string(m)); err != nil || m == "off" {
		return fmt.Errorf("host: set mode of %s: unknown mode %q (use auto, ask or deny)", id, m)
	}
	if !slices.Contains(plugin.Effects, e) {
		return fmt.Errorf("host: set mode of %s: invalid effect %s", id, e)
	}
	if _, err := h.record(ctx, h.db.SQL, id); err != nil {
		if isNotFound(err) && h.remotes != nil {
			if rerr := h.remotes.SetMode(ctx, id, e, m); !isNotFound(rerr) {
				return rerr
			}
		}
		return err
	}
	_, err := h.db.SQL.ExecContext(ctx, `INSERT INTO modes (plugin, effect, mode) VALUES (?, ?, ?)
		ON CONFLICT (plugin, effect) DO UPDATE SET mode = excluded.mode`, id, e.String(), string(m))
	if err != nil {
		return fmt.Errorf("host: set mode of %s: %w", id, err)
	}
	return nil
}

func writeModes(ctx context.Context, tx *sql.Tx, id string, modes map[plugin.Effect]Mode) error {
	for _, e := range plugin.Effects {
		if _, err := tx.ExecContext(ctx, `INSERT INTO modes (plugin, effect, mode) VALUES (?, ?, ?)
			ON CONFLICT (plugin, effect) DO NOTHING`, id, e.String(), string(modes[e])); err != nil {
			return fmt.Errorf("host: modes of %s: %w", id, err)
		}
	}
	return nil
}

// Decision is what the permission rules say about one call.
type Decision int

// The three decisions.
const (
	Allow   Decision = iota // run it
	Confirm                 // ask the user first (a Confirmation)
	Refuse                  // do not run it
)

// Decide applies the permission rules to one call (docs/HOST-API.md "Tools
// and permissions"): userOnly tools are refused to the agent and the
// scheduler; deny refuses every actor; in a turn that holds untrusted or
// private data (turn.Held), a call that can carry its input to a third party
// (reach) asks the agent's person first and is refused to the scheduler,
// whatever the tool's declared effect or mode; ask runs for the user, asks for
// the agent and is refused to the scheduler; auto runs, except that the
// agent's write, money or public call in a turn that read untrusted text needs
// confirmation. A person's own tap (ActorUser) is never stopped by the turn:
// the tap is the yes. The Verdict says why when it is not Allow.
func Decide(actor Actor, t *plugin.Tool, mode Mode, turn TurnState, reach Reach) Verdict {
	if t.UserOnly && actor != ActorUser {
		return Verdict{Refuse, "", fmt.Sprintf("%s is userOnly: only a person's own tap can run it", t.Name)}
	}
	if mode == ModeDeny {
		return Verdict{Refuse, "", fmt.Sprintf("%s tools of this plugin are set to deny", t.Effect)}
	}
	if actor != ActorUser && turn.Held() && reach.outside() {
		what := "untrusted third-party text"
		switch {
		case turn.Untrusted && turn.Private:
			what = "untrusted third-party text and your private data"
		case turn.Private:
			what = "your private data"
		}
		reason := fmt.Sprintf("this turn holds %s, and this call can send its input to a party you have not vouched for", what)
		if actor == ActorAgent {
			return Verdict{Confirm, WhyThirdParty, reason}
		}
		return Verdict{Refuse, WhyThirdParty, reason + ", and a scheduled run cannot ask"}
	}
	if mode == ModeAsk {
		switch actor {
		case ActorUser:
			return Verdict{Allow, "", ""}
		case ActorAgent:
			return Verdict{Confirm, WhyAsk, fmt.Sprintf("%s tools of this plugin are set to ask", t.Effect)}
		default:
			return Verdict{Refuse, WhyAsk, fmt.Sprintf("%s tools of this plugin are set to ask, and a scheduled run cannot ask", t.Effect)}
		}
	}
	if actor == ActorAgent && turn.Untrusted && t.Effect != plugin.EffectRead {
		return Verdict{Confirm, WhyUntrusted, "this turn has read untrusted third-party text, so durable writes need confirmation"}
	}
	return Verdict{Allow, "", ""}
}

// Verdict is Decide's answer: the Decision, Why as a code (WhyAsk,
// WhyUntrusted, WhyThirdParty; "" for Allow and for a userOnly or deny
// refusal) and Reason in words ("" for Allow).
type Verdict struct {
	Decision Decision
	Why      string
	Reason   string
}

// The codes of Confirmation.Why: why Decide asked.
const (
	WhyAsk       = "ask"       // the tool's effect is set to ask
	WhyUntrusted = "untrusted" // the turn read untrusted text before this durable write
	// WhyThirdParty: the turn holds untrusted or private data and this call can
	// send its input to a party the person has not vouched for.
	WhyThirdParty = "third_party"
)

// Refusal is the error for a call the permission rules refuse.
type Refusal struct {
	Actor             Actor
	Plugin, Tool      string
	Reason            string
	NeedsConfirmation bool // the call would be allowed after the user confirms it
}

// Error says which call was refused and why.
func (r *Refusal) Error() string {
	return fmt.Sprintf("host: %s may not run %s.%s: %s", r.Actor, r.Plugin, r.Tool, strings.TrimSuffix(r.Reason, "."))
}
