package plugin

import "strings"

// AbilityOp is one operation of a host ability: its group and name, the fixed effect a tool must
// declare at least to call it, the shape of its args (as the seed writes it) and one line saying
// what it does. Seed "Host abilities".
type AbilityOp struct {
	Group   string // e.g. "verify"
	Op      string // e.g. "treehole"
	Effect  Effect // the operation's fixed effect
	Args    string // the args object as the seed writes it, "" when it takes none
	Summary string // what the operation does, for people and the assistant
}

// Name returns "group.op", the form a step writes after `ability:`.
func (o AbilityOp) Name() string { return o.Group + "." + o.Op }

// Ability is one group of host abilities, the unit a manifest lists in `abilities:`.
type Ability struct {
	Group string      // the name a manifest lists in abilities:
	Ops   []AbilityOp // the group's operations, in the seed's order
}

// Abilities is the catalogue of host abilities: the seed's "Host abilities" table, in its order.
// The validator, the interpreter and the host all read this one table; any group or operation
// not in it is refused. Plugins cannot add abilities (seed: "Plugins can't add abilities of their
// own").
var Abilities = []*Ability{
	{Group: "verify", Ops: []AbilityOp{
		{Group: "verify", Op: "treehole", Effect: EffectRead,
			Args:    "{ request, code?, via?: sms | otp, kind?: login | course }",
			Summary: "sends one Treehole request, handling the SMS or authenticator second factor"},
		{Group: "verify", Op: "treeholeSendCode", Effect: EffectWrite,
			Args:    "{ kind? }",
			Summary: "sends the SMS code for the pending Treehole check (or the check named by kind)"},
	}},
	{Group: "otp", Ops: []AbilityOp{
		{Group: "otp", Op: "code", Effect: EffectRead,
			Summary: "the current code of the IAAA authenticator (手机令牌), or null"},
	}},
	{Group: "todos", Ops: []AbilityOp{
		{Group: "todos", Op: "list", Effect: EffectRead, Summary: "lists the user's to-dos"},
		{Group: "todos", Op: "add", Effect: EffectWrite, Summary: "adds a to-do"},
		{Group: "todos", Op: "update", Effect: EffectWrite, Summary: "changes a to-do"},
		{Group: "todos", Op: "setDone", Effect: EffectWrite, Summary: "marks a to-do done or not done"},
		{Group: "todos", Op: "remove", Effect: EffectWrite, Summary: "removes a to-do"},
	}},
	{Group: "timetable", Ops: []AbilityOp{
		{Group: "timetable", Op: "get", Effect: EffectRead, Summary: "reads the user's timetable"},
		{Group: "timetable", Op: "upsert", Effect: EffectWrite, Summary: "adds or changes timetable entries"},
		{Group: "timetable", Op: "remove", Effect: EffectWrite, Summary: "removes timetable entries"},
	}},
	{Group: "scheduler", Ops: []AbilityOp{
		{Group: "scheduler", Op: "list", Effect: EffectRead, Summary: "lists scheduled tasks"},
		{Group: "scheduler", Op: "create", Effect: EffectWrite, Summary: "creates a scheduled task"},
		{Group: "scheduler", Op: "update", Effect: EffectWrite, Summary: "changes a scheduled task"},
		{Group: "scheduler", Op: "remove", Effect: EffectWrite, Summary: "removes a scheduled task"},
	}},
	{Group: "browser", Ops: []AbilityOp{
		{Group: "browser", Op: "open", Effect: EffectRead, Args: "{ url }",
			Summary: "opens an https URL outside the app"},
	}},
	{Group: "campusPage", Ops: []AbilityOp{
		{Group: "campusPage", Op: "open", Effect: EffectRead, Args: "{ service }",
			Summary: "opens a campus site, signed in"},
	}},
	{Group: "sms", Ops: []AbilityOp{
		{Group: "sms", Op: "awaitCode", Effect: EffectRead,
			Summary: "fills in an SMS code in one tap, after the user allows reading one SMS"},
	}},
	{Group: "files", Ops: []AbilityOp{
		{Group: "files", Op: "pick", Effect: EffectRead, Args: "{ types?, multiple? }",
			Summary: "lets the user pick files"},
	}},
	{Group: "crypto", Ops: []AbilityOp{
		{Group: "crypto", Op: "sha256", Effect: EffectRead, Args: "{ text }",
			Summary: "the SHA-256 of a text, in hex"},
	}},
	{Group: "cloud", Ops: []AbilityOp{
		{Group: "cloud", Op: "call", Effect: EffectRead, Args: "{ fn, input }",
			Summary: "calls one of this plugin's server functions"},
	}},
}

// AbilityGroup returns the catalogue entry of a group such as "todos", or nil when the group is
// unknown.
func AbilityGroup(group string) *Ability {
	for _, a := range Abilities {
		if a.Group == group {
			return a
		}
	}
	return nil
}

// LookupAbility finds the operation written "group.op" (e.g. "todos.add"). ok is false when the
// name has no dot, or the group or the operation is not in the catalogue.
func LookupAbility(name string) (op AbilityOp, ok bool) {
	group, opName, found := strings.Cut(name, ".")
	if !found {
		return AbilityOp{}, false
	}
	a := AbilityGroup(group)
	if a == nil {
		return AbilityOp{}, false
	}
	for _, o := range a.Ops {
		if o.Op == opName {
			return o, true
		}
	}
	return AbilityOp{}, false
}

// CampusServices are the campus services the host can sign in to and sign requests for, the
// names a manifest may list in `campus:` (seed "What the plugin declares"; seed 003 "从 pkucli
// 移植" lists the same ten). A new service needs a host adapter first.
var CampusServices = []string{
	"card", "its", "treehole", "blackboard", "elective", "cwfw", "cwpay", "bdkj", "library", "library-space",
}

// IsCampusService reports whether name is in CampusServices.
func IsCampusService(name string) bool {
	for _, s := range CampusServices {
		if s == name {
			return true
		}
	}
	return false
}

// AbilityTable renders Abilities as the Markdown table of docs/PLUGIN-LANGUAGE.md ("Host
// abilities"): one row per group; operations with the same effect in a run, "`op { args }`, …
// (effect)", runs separated by "; ".
func AbilityTable() string {
	var b strings.Builder
	b.WriteString("| Group | Operations (effect) |\n| --- | --- |\n")
	for _, a := range Abilities {
		b.WriteString("| `" + a.Group + "` | ")
		for i, o := range a.Ops {
			if i > 0 {
				if a.Ops[i-1].Effect == o.Effect {
					b.WriteString(", ")
				} else {
					b.WriteString("; ")
				}
			}
			op := o.Op
			if o.Args != "" {
				op += " " + strings.ReplaceAll(o.Args, "|", `\|`)
			}
			b.WriteString("`" + op + "`")
			if i == len(a.Ops)-1 || a.Ops[i+1].Effect != o.Effect {
				b.WriteString(" (" + o.Effect.String() + ")")
			}
		}
		b.WriteString(" |\n")
	}
	return b.String()
}
