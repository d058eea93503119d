package plugin

import (
	"time"

	"github.com/pkuinfo/harness/lang/diag"
	"github.com/pkuinfo/harness/lang/expr"
)

// Plugin is one loaded plugin document: the manifest, the instructions, the tools and the files
// they came from. LoadDir and Load return a Plugin even when the diagnostics hold errors, so that
// tools can show what was read; never run a plugin whose diagnostics hold an error.
type Plugin struct {
	// Dir is the local folder it was loaded from ("" when loaded from a link).
	Dir string
	// Source is the folder or install link as given to LoadDir or Load.
	Source string
	// Manifest is the decoded frontmatter of PLUGIN.md.
	Manifest *Manifest
	// Instructions is the Markdown body of PLUGIN.md after the frontmatter (seed "The instructions").
	Instructions string
	// Tools are the manifest's tools in manifest order; tools that failed to load are absent.
	Tools []*Tool
	// Shared holds the `shared:` constants and functions; never nil (empty when there is none).
	Shared *Shared
	// Files maps each loaded file's relative path ("PLUGIN.md", "tools/free.yaml") to its bytes.
	Files map[string][]byte
	// Hash is "sha256:" and the hex SHA-256 of the loaded files (see ContentHash).
	Hash string
	// Env is the plugin's expression environment: the standard library plus the shared
	// functions. Each Tool has its own Env layered on top with the tool's functions.
	Env *expr.Env
}

// Tool returns the tool with the given name, or nil.
func (p *Plugin) Tool(name string) *Tool {
	for _, t := range p.Tools {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// Manifest is the YAML frontmatter of PLUGIN.md (seed "The manifest"). Lists keep the order in
// which they were written. Pos maps a field's dotted path ("id", "tools.free",
// "i18n.en.tools.free.title") to the position of its value in PLUGIN.md.
type Manifest struct {
	Spec        int    // must be 1
	ID          string // ^[a-z0-9][a-z0-9-]{1,40}$ (docs/DECISIONS.md §7)
	Name        string // shown to users (Chinese); required
	Description string // 4 to 200 characters
	Version     string // semantic version, e.g. 1.2.0
	Author      string // GitHub name or organisation; required
	Icon        string // a host icon name, optional

	Campus    []string // campus services called with the user's session (CampusServices)
	Network   []string // public hosts: "example.com" or "*.example.com"
	Abilities []string // host ability groups (Abilities)

	Tools   []*ToolRef // tool name → file, or inline, in manifest order
	Shared  string     // the shared file, "" when absent or written inline
	Widgets []*FileRef // widget name → JSON file
	Screens []*FileRef // screen name → JSON file

	DataSources  []*DataSource  // live data for widgets, in written order
	Settings     []*Setting     // rows the plugin adds to Settings
	Commands     []*Command     // slash commands, in written order
	DefaultModes []*DefaultMode // starting permission mode per effect
	I18n         *I18n          // nil when absent
	Remote       *Remote        // nil unless the plugin describes a remote MCP server
	Cloud        *Cloud         // nil unless the plugin uses PKU harness Cloud
	Server       *Server        // nil unless the plugin declares server functions

	// Pos is the position of every field's value, by dotted path.
	Pos Positions
}

// Requires is derived from the declarations, as the seed says ("You don't need to write
// requires"): "campus-session" when Campus is set, "network" when Network or Remote is set,
// "cloud" when Cloud or Server is set.
func (m *Manifest) Requires() []string {
	var r []string
	if len(m.Campus) > 0 {
		r = append(r, "campus-session")
	}
	if len(m.Network) > 0 || m.Remote != nil {
		r = append(r, "network")
	}
	if m.Cloud != nil || m.Server != nil {
		r = append(r, "cloud")
	}
	return r
}

// Positions maps a dotted field path to the position of its value in one file.
type Positions map[string]diag.Pos

// At returns the position recorded for path, or the position of its closest recorded parent
// ("a.b.c" falls back to "a.b", then "a"), or 1:1.
func (ps Positions) At(path string) diag.Pos {
	for {
		if p, ok := ps[path]; ok {
			return p
		}
		i := lastDot(path)
		if i < 0 {
			return diag.Pos{Line: 1, Col: 1}
		}
		path = path[:i]
	}
}

func lastDot(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '.' {
			return i
		}
	}
	return -1
}

// ToolRef is one entry of the manifest's `tools:` map.
type ToolRef struct {
	Name string   // the tool name, the key under tools:
	File string   // the tool file, "" when the tool is written inline in the frontmatter
	Pos  diag.Pos // position of the key in PLUGIN.md
}

// FileRef is one entry of `widgets:` or `screens:`: a name and a relative JSON file.
type FileRef struct {
	Name string   // the widget or screen name
	File string   // the JSON file, relative to the plugin folder
	Pos  diag.Pos // position of the file path in PLUGIN.md
}

// DataSource is one entry of `dataSources:`: live data for widgets, read through a read tool
// (or a server function with Fn), cached for TTL.
type DataSource struct {
	Name  string        // the key under dataSources:
	Tool  string        // a tool of this plugin, "" when Fn is set
	Fn    string        // a server function, "" when Tool is set
	Args  any           // the tool's input as an expr value (nil when absent)
	TTL   time.Duration // how long a result stays fresh; 0 when not written
	Title string        // shown to users, optional
	Pos   diag.Pos      // position of the key in PLUGIN.md
}

// Setting is one row the plugin adds to Settings; tapping it opens one of the plugin's screens.
type Setting struct {
	Screen   string   // the screen the row opens (a key of screens:)
	Title    string   // the row title; required
	Subtitle string   // optional second line
	Icon     string   // optional host icon name
	Pos      diag.Pos // position of the entry in PLUGIN.md
}

// Command is one slash command (`/name`, ^[a-z][a-z0-9-]*$). It either sends Prompt to the
// assistant ({{input}} is replaced by what follows the command), opens Screen, or runs Tool with
// Args.
type Command struct {
	Name        string   // the command, typed as /Name
	Description string   // the line shown in the / menu; required
	Aliases     []string // other names, e.g. Chinese ones
	ArgHint     string   // placeholder text; when set the command takes input
	Prompt      string   // text sent as the user's message
	Screen      string   // a screen to open
	Tool        string   // a tool to run
	Args        any      // the tool's input (expr value) when Tool is set
	Pos         diag.Pos // position of the key in PLUGIN.md
}

// DefaultMode is one entry of `defaultModes:`: the starting permission mode for an effect.
type DefaultMode struct {
	Effect Effect   // the effect the mode applies to
	Mode   string   // "auto", "ask" or "deny" ("off" is read as deny)
	Pos    diag.Pos // position of the mode in PLUGIN.md
}

// I18n holds the translations; only English is defined (seed "Optional fields").
type I18n struct {
	En *Locale // English text; nil when absent
}

// Locale is the English text of a plugin: i18n.en.
type Locale struct {
	Name         string         // English plugin name
	Description  string         // English plugin description
	Instructions string         // English instructions (optional; the model reads the Markdown body)
	Tools        []*ToolText    // i18n.en.tools.<name>
	Widgets      []*UIText      // i18n.en.widgets.<name>: title, description
	Screens      []*UIText      // i18n.en.screens.<name>: title
	Settings     []*UIText      // i18n.en.settings.<screen>: title, subtitle
	Commands     []*CommandText // i18n.en.commands.<name>
	DataSources  []*UIText      // i18n.en.dataSources.<name>: title
}

// ToolText is the English title and summary of one tool.
type ToolText struct {
	Name    string   // the tool name
	Title   string   // English title, ≤ 60 characters
	Summary string   // English summary, ≤ 80 characters
	Pos     diag.Pos // position of the key in PLUGIN.md
}

// UIText is the English text of a widget, screen, setting row or data source.
type UIText struct {
	Name        string   // the widget, screen, setting screen or data source name
	Title       string   // English title
	Description string   // English description (widgets)
	Subtitle    string   // English subtitle (settings)
	Pos         diag.Pos // position of the key in PLUGIN.md
}

// CommandText is the English text of a slash command.
type CommandText struct {
	Name        string   // the command name
	Description string   // English description
	ArgHint     string   // English placeholder
	Aliases     []string // English aliases
	Prompt      string   // English prompt
	Pos         diag.Pos // position of the key in PLUGIN.md
}

// Remote describes a remote MCP server (seed "Optional fields": remote: { mcp, auth }).
type Remote struct {
	MCP  string   // https URL of the MCP endpoint
	Auth string   // "none" or "bearer"
	Pos  diag.Pos // position of remote: in PLUGIN.md
}

// Cloud is the plugin's use of PKU harness Cloud (seed 003 "插件指南" §1).
type Cloud struct {
	Protocol     int      // must be 1 when written
	Uses         []string // store, channels, mailbox, push, files, functions
	E2E          bool     // stored data must be end-to-end encrypted
	Optional     bool     // the plugin works without Cloud
	Pages        []string // static viewer pages
	DisclosureZh []string // what data leaves the device, one line per fact; required when Uses is set
	DisclosureEn []string // the same lines in English, line by line
	BackendKind  string   // "external" or ""
	BackendURL   string   // https URL of an external backend
	// Functions is cloud.functions (seed 003 "插件指南" §1, CloudManifest.functions): the server
	// functions the plugin calls, by FunctionName (^[a-zA-Z][a-zA-Z0-9_]{0,63}$), in written
	// order; nil when the field is absent. With a `server:` section each must be one of its
	// functions; without one they are run by the provider or the external backend. Listing
	// any implies cloud.uses: [functions]. The host calls no other function, and a consent
	// covers these names (Manifest.CloudFunctions).
	Functions []string
	Pos       diag.Pos // position of cloud: in PLUGIN.md
}

// CloudFunctions are the server functions the plugin may call through Cloud: cloud.functions
// when written, else every function of the `server:` section, in written order; nil when the
// plugin declares none (seed 003 "插件指南" §1 and "服务端函数").
func (m *Manifest) CloudFunctions() []string {
	if m == nil {
		return nil
	}
	if m.Cloud != nil && m.Cloud.Functions != nil {
		return m.Cloud.Functions
	}
	if m.Server == nil {
		return nil
	}
	out := make([]string, 0, len(m.Server.Functions))
	for _, f := range m.Server.Functions {
		out = append(out, f.Name)
	}
	return out
}

// Server declares server functions (seed "Server functions"; off on the official server). The
// steps of a server function are decoded and checked like a tool's, with `secrets` and `caller`
// in scope and the server's own abilities (ServerAbilities) instead of the host's.
type Server struct {
	Network   []string          // hosts server steps may reach (https)
	Secrets   []string          // names of operator-held secrets, ^[A-Z][A-Z0-9_]*$
	Functions []*ServerFunction // in written order
	Pos       diag.Pos          // position of server: in PLUGIN.md
}

// ServerFunction is one entry of server.functions: a tool-shaped function with an access rule
// ("user" or "public") and an optional result cache time.
type ServerFunction struct {
	*Tool
	Access string        // "user" (default) or "public"
	Cache  time.Duration // how long a result may be reused; 0 = never
}

// Shared is the `shared:` file (or inline map): constants and functions every tool sees. A tool's
// own definition of the same name wins.
type Shared struct {
	File      string       // "" when inline or absent
	Constants *expr.Object // name → value, in written order
	Functions []*Function  // in written order; defined in Plugin.Env
	// Pos is the position of each constant and function name ("constants.X", "functions.f") in
	// the shared file (PLUGIN.md when inline).
	Pos Positions

	src string // the file the definitions are in: File, or PLUGIN.md when inline
}

// Tool is one tool (seed "Tools"). File is the file it was read from ("PLUGIN.md" for an inline
// tool). Pos maps a field path ("title", "input.day.default") to its value's position in File.
type Tool struct {
	Name        string        // ^[a-z][a-zA-Z0-9]{0,39}$, the key under tools:
	File        string        // the tool file, or "PLUGIN.md" for an inline tool
	Title       string        // ≤ 60 characters
	Summary     string        // ≤ 80 characters, optional
	Description string        // for the model only
	Effect      Effect        // read, write, money or public; 0 when missing or invalid
	Input       []*InputField // input fields in written order
	// Constants are the tool's own constants, in written order.
	Constants *expr.Object
	// Functions are the tool's own functions, in written order.
	Functions []*Function
	Steps     []*Step    // run in order
	Return    *ExprField // nil when the tool has no return (its result is null)
	Untrusted bool       // results carry third-party text
	UserOnly  bool       // only a person's tap may run it
	OnDemand  bool       // offered to the model only after plugins.use

	// AllConstants is the shared constants overlaid with the tool's own (the tool's win), which
	// is what `constants` and each constant's name mean inside the tool (docs/DECISIONS.md §4).
	AllConstants *expr.Object
	// Env is the plugin's Env plus the tool's own functions; parse and evaluate the tool's
	// expressions with it.
	Env *expr.Env
	// Pos is the position of every field's value in File, by dotted path.
	Pos Positions
}

// Function is one entry of `functions:`: a name and an arrow function.
type Function struct {
	Name string     // the function's name in expressions
	Body *ExprField // the arrow function
}

// InputField is one field of a tool's input (seed "Each input field has the form { type, enum?,
// default?, optional?, description?, min?, max?, pattern?, trim?, items? }"). Type is the
// declared type, or the one implied by Enum when type is omitted.
type InputField struct {
	Name        string      // the key under input: ("items" for an array's element schema)
	Type        string      // string, number, integer, boolean, array, object
	Enum        []any       // allowed values (expr values); nil when any
	Default     any         // used when the field is missing or null (see HasDefault)
	HasDefault  bool        // default: was written (it may be null)
	Optional    bool        // a missing field without default is null instead of an error
	Trim        bool        // strings: spaces are removed at both ends first
	Description string      // for the model
	Min, Max    *float64    // bounds on a number, or on the length of a string or array
	Pattern     string      // RE2, for strings
	Items       *InputField // the element schema of an array, or nil
	Pos         diag.Pos    // position of the field's key
}

// StepKind says which of the seed's step forms a Step is.
type StepKind int

// The step kinds of the seed's "Steps" table.
const (
	StepValue StepKind = iota + 1
	StepRequest
	StepEach
	StepPaginate
	StepExtract
	StepIf
	StepCheck
	StepTry
	StepKV
	StepCache
	StepCall
	StepAbility
)

var stepKindNames = [...]string{
	StepValue: "value", StepRequest: "request", StepEach: "each", StepPaginate: "paginate",
	StepExtract: "extract", StepIf: "if", StepCheck: "check", StepTry: "try", StepKV: "kv",
	StepCache: "cache", StepCall: "call", StepAbility: "ability",
}

// String returns the key that introduces the step kind ("value", "request", …).
func (k StepKind) String() string {
	if k > 0 && int(k) < len(stepKindNames) {
		return stepKindNames[k]
	}
	return "step"
}

// Step is one step of a tool. Kind says which fields are set:
//
//	StepValue     Value
//	StepRequest   Request, As
//	StepEach      Each, Concurrency, and one body: Request (+As), Value, or Steps (+Return)
//	StepPaginate  Paginate, As
//	StepExtract   Extract, Limit
//	StepIf        If, Then, Else
//	StepCheck     Check, Error
//	StepTry       Try, Catch
//	StepKV        KV ("get", "set", "delete"), Key, Value (set), TTL (set)
//	StepCache     Cache, Steps, Return
//	StepCall      Call, Input
//	StepAbility   Ability, Group, Op, Args
//
// Path names the step for diagnostics and errors: "steps[2] (let page)",
// "steps[3].then[0] (check)".
type Step struct {
	Kind StepKind // which step form this is
	Let  string   // "" when the step binds nothing
	Path string   // "steps[2] (let page)", for messages
	File string   // the file the step is in
	Pos  diag.Pos // the step's first key

	Value   *ExprField // value: the expression; kv set: the value; each: the per-item body
	Request *Request   // request, and each with a request body
	As      string     // json, text, html, response; "" chooses by content type

	Each        *ExprField // the list expression
	Concurrency int        // 1–4; 1 when not written
	Steps       []*Step    // each and cache bodies
	Return      *ExprField // optional result of an each or cache body

	Paginate *Paginate // request, next, items and max of a paginate step
	Extract  *Extract  // from, each and fields of an extract step
	Limit    int       // extract: at most this many items; 0 = no cap

	If   *ExprField // the condition
	Then []*Step    // steps run when If is truthy
	Else []*Step    // steps run otherwise; may be empty

	Check *ExprField     // the condition that must hold
	Error *TemplateField // the message when Check is falsy

	Try   []*Step // steps whose error is caught
	Catch []*Step // steps run on an error, with error in scope

	KV  string         // get, set, delete
	Key *TemplateField // kv key template
	TTL time.Duration  // kv set: 0 = never expires

	Cache *Cache // key, ttl and staleOnError of a cache step

	Call  string     // a tool of the same plugin
	Input *ExprField // call: the callee's input expression; nil = {}

	Ability string     // "group.op"
	Group   string     // ability group, e.g. "todos"
	Op      string     // ability operation, e.g. "add"
	Args    *ExprField // ability args expression; nil = no args

	pos []keyPos // of each key's value ("as", "extract.each")
}

type keyPos struct {
	key string
	pos diag.Pos
}

// at returns the position of the value of key in the step, or the step's position.
func (s *Step) at(key string) diag.Pos {
	for i := len(s.pos) - 1; i >= 0; i-- {
		if s.pos[i].key == key {
			return s.pos[i].pos
		}
	}
	return s.Pos
}

func (s *Step) setPos(key string, p diag.Pos) { s.pos = append(s.pos, keyPos{key, p}) }

// Request is a request step's `request:` (docs/DECISIONS.md §6): either Campus plus a path in URL,
// or an absolute https URL on a network host. Query, Headers and Form are objects whose values
// are templates; JSON is any value whose strings are templates. At most one of Body, JSON and
// Form is set.
type Request struct {
	Campus  string         // a campus service, or "" for a public https request
	URL     *TemplateField // template: a path with Campus, else an https URL
	Method  string         // upper case; GET when not written
	Query   *TemplateValue // object: name → template; written order is kept
	Headers *TemplateValue // object: name → template
	Body    *TemplateField // raw body template
	JSON    *TemplateValue // JSON body: any value, strings are templates
	Form    *TemplateValue // form body: name → template
	Timeout time.Duration  // 0 = the run's limit
	Pos     diag.Pos       // position of the request map
}

// Paginate repeats Request while Next is not null (docs/DECISIONS.md §6, §10).
type Paginate struct {
	Request *Request   // the first page's request
	Next    *ExprField // null to stop, a URL string, or an object merged into the request
	Items   *ExprField // each page's items; page, pageIndex, items are in scope
	Max     int        // 1–30 pages; 30 when not written
	Pos     diag.Pos   // position of the paginate map
}

// Extract picks items out of HTML (docs/DECISIONS.md §6).
type Extract struct {
	From   *ExprField      // HTML text or a node
	Each   string          // CSS selector
	Fields []*ExtractField // in written order
	Pos    diag.Pos        // position of the extract map
}

// ExtractField is one `fields:` entry, "selector | pipe | pipe". An empty Selector (or ".") is the
// item itself.
type ExtractField struct {
	Name     string   // the field's key in each item
	Src      string   // as written
	Selector string   // CSS selector; "" or "." is the item itself
	Pipes    []Pipe   // applied left to right
	Pos      diag.Pos // position of the field's value
}

// Pipe is one extract pipe: text, html, attr NAME, url, num, int, date [LAYOUT], match REGEX,
// trim, lower, upper.
type Pipe struct {
	Name string // text, html, attr, url, num, int, date, match, trim, lower, upper
	Arg  string // attr NAME, date LAYOUT, match REGEX; "" otherwise
}

// Cache is a cache step's `cache:` (docs/DECISIONS.md §6, §10).
type Cache struct {
	Key          *TemplateField // KV key template
	TTL          time.Duration  // > 0
	StaleOnError bool           // on an error, return an expired value instead of failing
	Pos          diag.Pos       // position of the cache map
}
