package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pkuinfo/harness/lang/diag"
	"github.com/pkuinfo/harness/plugin"
)

// Entry is one plugin of the registry (seed 003 "发布", the registry
// record of "注册插件" and "登记到插件市场"). Cloud is the plugin's cloud
// declaration copied verbatim.
type Entry struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Author      string   `json:"author"`
	Kind        string   `json:"kind"` // document, remote or builtin
	Icon        string   `json:"icon,omitempty"`
	Source      string   `json:"source,omitempty"`   // the install link (document, builtin) or repository (remote)
	Endpoint    string   `json:"endpoint,omitempty"` // remote: the MCP endpoint
	Auth        string   `json:"auth,omitempty"`     // remote: none or bearer
	Requires    []string `json:"requires"`
	Scopes      []string `json:"scopes"`
	Tags        []string `json:"tags"`
	Verified    bool     `json:"verified,omitempty"`
	Cloud       *Cloud   `json:"cloud,omitempty"`
}

// Cloud is a registry entry's cloud declaration (seed 003 "使用 PKU harness
// Cloud"): uses, e2e, disclosure in both languages, and an optional
// external backend.
type Cloud struct {
	Protocol   int         `json:"protocol,omitempty"`
	Uses       []string    `json:"uses"`
	E2E        *bool       `json:"e2e"`
	Optional   bool        `json:"optional,omitempty"`
	Pages      []string    `json:"pages,omitempty"`
	Disclosure *Disclosure `json:"disclosure"`
	Backend    *Backend    `json:"backend,omitempty"`
}

// Disclosure says what data leaves the device, line by line, in both
// languages.
type Disclosure struct {
	Zh []string `json:"zh"`
	En []string `json:"en"`
}

// Backend is an external Cloud backend.
type Backend struct {
	Kind string `json:"kind"`
	URL  string `json:"url"`
}

// The kinds of registry entries.
const (
	KindDocument = "document"
	KindRemote   = "remote"
	KindBuiltin  = "builtin"
)

// Options are what Validate checks beyond the file itself.
type Options struct {
	// Builtins are the ids of the app's built-in plugins: a builtin entry
	// must name one (the seed's "内置插件是否存在"). nil skips the check.
	Builtins []string
	// RemoteName, when set, asks a remote entry's MCP server for its name
	// (initialize's serverInfo.name), which must equal the entry's id. It
	// is given the endpoint and whether the entry says auth: bearer.
	RemoteName func(endpoint string, bearer bool) (string, error)
}

var (
	idRE   = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,40}$`)
	tagRE  = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,30}$`)
	ghUser = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$`)
)

// Requires are the capability needs an entry may list (seed 004:
// derived from campus, network and cloud).
var Requires = []string{"campus-session", "network", "cloud"}

// CloudServices are the services a cloud declaration may use.
var CloudServices = []string{"store", "channels", "mailbox", "push", "files", "functions"}

// MaxFile bounds a registry file.
const MaxFile = 4 << 20

// Validate checks the registry file data (named file in diagnostics): a
// JSON array of entries, or an object whose "plugins" is one; each entry's
// fields by the schema (required fields, types, no unknown fields, the id
// form, kind, requires, tags); unique ids and icons; a document's source a
// valid install link, a builtin's the official repository's folder of a
// built-in this app has (Options.Builtins); a remote entry's endpoint
// https (plain http only to a loopback or private address), its auth none
// or bearer, and its MCP server's name equal to its id (Options.RemoteName);
// a cloud declaration complete (uses from CloudServices, e2e given, a
// disclosure in Chinese and the same number of English lines, an
// external backend's https URL). It returns the entries that decoded and
// every problem, sorted by position.
func Validate(file string, data []byte, o Options) ([]*Entry, []diag.Diagnostic) {
	v := &validator{file: file, data: data, o: o}
	if len(data) > MaxFile {
		v.errAt(0, "$", "the file is %d bytes, the limit is %d", len(data), MaxFile)
		return nil, v.diags
	}
	if !utf8.Valid(data) {
		v.errAt(0, "$", "the file is not UTF-8")
		return nil, v.diags
	}
	if len(bytes.TrimSpace(data)) == 0 {
		v.errAt(0, "$", "the file is empty; write an array of entries or {\"plugins\": [...]}")
		return nil, v.diags
	}
	list, base, prefix, err := entriesOf(data)
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		v.errAt(len(bytes.TrimRight(data, " \t\r\n")), "$", "the file ends before the JSON does")
		return nil, v.diags
	}
	if err != nil {
		v.errAt(offsetOf(err), "$", "%s", err)
		return nil, v.diags
	}
	var out []*Entry
	ids, icons := map[string]string{}, map[string]string{}
	for i, raw := range list {
		path := fmt.Sprintf("%s[%d]", prefix, i)
		e := v.entry(raw.data, base+raw.off, path)
		if e == nil {
			continue
		}
		out = append(out, e)
		if prev, ok := ids[e.ID]; ok && e.ID != "" {
			v.errField(raw, base, path, "id", "id %q is already used by %s", e.ID, prev)
		} else {
			ids[e.ID] = path
		}
		if e.Icon != "" {
			if prev, ok := icons[e.Icon]; ok {
				v.errField(raw, base, path, "icon", "icon %q is already used by %s; each entry has its own", e.Icon, prev)
			} else {
				icons[e.Icon] = path
			}
		}
	}
	sort.SliceStable(v.diags, func(i, j int) bool {
		a, b := v.diags[i], v.diags[j]
		if a.Pos.Line != b.Pos.Line {
			return a.Pos.Line < b.Pos.Line
		}
		return a.Pos.Col < b.Pos.Col
	})
	return out, v.diags
}

type rawEntry struct {
	data json.RawMessage
	off  int // offset of the entry in the array's text
	keys map[string]int
}

// entriesOf finds the array of entries and the byte offset of each.
func entriesOf(data []byte) ([]*rawEntry, int, string, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	base := len(data) - len(trimmed)
	prefix := "$"
	arr := trimmed
	if len(trimmed) > 0 && trimmed[0] == '{' {
		var top map[string]json.RawMessage
		if err := strictDecode(trimmed, &top); err != nil {
			return nil, 0, "", err
		}
		p, ok := top["plugins"]
		if !ok {
			return nil, 0, "", fmt.Errorf("the file is an object without \"plugins\"; write an array of entries or {\"plugins\": [...]}")
		}
		for k := range top {
			if k != "plugins" && k != "version" && k != "$schema" {
				return nil, 0, "", fmt.Errorf("unknown top-level field %q (use plugins)", k)
			}
		}
		i := bytes.Index(trimmed, p)
		base += i
		arr, prefix = p, "plugins"
	}
	dec := json.NewDecoder(bytes.NewReader(arr))
	tok, err := dec.Token()
	if err != nil {
		return nil, 0, "", err
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, 0, "", fmt.Errorf("the registry must be a JSON array of entries")
	}
	var out []*rawEntry
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, 0, "", err
		}
		end := int(dec.InputOffset())
		out = append(out, &rawEntry{data: raw, off: end - len(raw), keys: keyOffsets(raw)})
	}
	if _, err := dec.Token(); err != nil {
		return nil, 0, "", err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, 0, "", fmt.Errorf("text after the array")
	}
	return out, base, prefix, nil
}

func strictDecode(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func offsetOf(err error) int {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case asErr(err, &se):
		return int(se.Offset)
	case asErr(err, &te):
		return int(te.Offset)
	}
	return 0
}

func asErr[T error](err error, target *T) bool {
	t, ok := err.(T)
	if ok {
		*target = t
	}
	return ok
}

type validator struct {
	file  string
	data  []byte
	o     Options
	diags []diag.Diagnostic
}

func (v *validator) pos(off int) diag.Pos {
	if off > len(v.data) {
		off = len(v.data)
	}
	line, col := 1, 1
	for _, r := range string(v.data[:off]) {
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return diag.Pos{Line: line, Col: col, Offset: off}
}

func (v *validator) add(sev diag.Severity, off int, path string, format string, args ...any) {
	v.diags = append(v.diags, diag.Diagnostic{Severity: sev, File: v.file, Pos: v.pos(off), Path: path, Msg: fmt.Sprintf(format, args...)})
}

func (v *validator) errAt(off int, path, format string, args ...any) {
	v.add(diag.Error, off, path, format, args...)
}

// errField reports at the value of key in raw (or at raw when absent).
func (v *validator) errField(raw *rawEntry, base int, path, key, format string, args ...any) {
	off := base + raw.off
	if k, ok := raw.keys[key]; ok {
		off = base + raw.off + k
	}
	v.errAt(off, path+"."+key, format, args...)
}

// keyOffsets returns the offset of each top-level key's value in an
// object's text.
func keyOffsets(raw []byte) map[string]int {
	out := map[string]int{}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return out
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		k, _ := tok.(string)
		// The value starts after the colon; InputOffset is at the end of the key.
		off := int(dec.InputOffset())
		for off < len(raw) && (raw[off] == ' ' || raw[off] == ':' || raw[off] == '\t' || raw[off] == '\n' || raw[off] == '\r') {
			off++
		}
		out[k] = off
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return out
		}
	}
	return out
}

func (v *validator) entry(raw json.RawMessage, off int, path string) *Entry {
	re := &rawEntry{data: raw, keys: keyOffsets(raw)}
	at := func(key string) int {
		if k, ok := re.keys[key]; ok {
			return off + k
		}
		return off
	}
	for _, k := range sortedKeys(re.keys) {
		if !slices.Contains(entryFields, k) {
			v.errAt(at(k), path+"."+k, "unknown field (an entry has %s)", strings.Join(entryFields, ", "))
		}
	}
	var e Entry
	if err := json.Unmarshal(raw, &e); err != nil {
		var te *json.UnmarshalTypeError
		if asErr(err, &te) && te.Field != "" {
			v.errAt(at(strings.Split(te.Field, ".")[0]), path+"."+te.Field, "must be %s, not a JSON %s", jsonKind(te.Type.Kind().String()), te.Value)
		} else {
			v.errAt(off+offsetOf(err), path, "%s", strings.TrimPrefix(err.Error(), "json: "))
		}
		return nil
	}
	req := func(key, val string) bool {
		if strings.TrimSpace(val) == "" {
			v.errAt(at(key), path+"."+key, "%s is required", key)
			return false
		}
		return true
	}
	if req("id", e.ID) && !idRE.MatchString(e.ID) {
		v.errAt(at("id"), path+".id", "id %q must match %s", e.ID, idRE)
	}
	req("name", e.Name)
	if req("description", e.Description) {
		if n := utf8.RuneCountInString(e.Description); n < 4 || n > 200 {
			v.errAt(at("description"), path+".description", "the description has %s; it must have 4 to 200", characters(n))
		}
	}
	if req("author", e.Author) && !ghUser.MatchString(e.Author) {
		v.errAt(at("author"), path+".author", "author %q is not a GitHub user or organisation name", e.Author)
	}
	for _, k := range []struct {
		key  string
		list []string
	}{{"requires", e.Requires}, {"scopes", e.Scopes}, {"tags", e.Tags}} {
		if _, ok := re.keys[k.key]; !ok {
			v.errAt(off, path+"."+k.key, "%s is required (write [] when there is none)", k.key)
		}
	}
	for i, r := range e.Requires {
		if !slices.Contains(Requires, r) {
			v.errAt(at("requires"), fmt.Sprintf("%s.requires[%d]", path, i), "unknown requirement %q (use %s)", r, strings.Join(Requires, ", "))
		}
	}
	for i, t := range e.Tags {
		if !tagRE.MatchString(t) {
			v.errAt(at("tags"), fmt.Sprintf("%s.tags[%d]", path, i), "tag %q: use lower-case letters, digits and -", t)
		}
	}
	for i, s := range e.Scopes {
		if strings.TrimSpace(s) == "" || strings.ContainsAny(s, " /") {
			v.errAt(at("scopes"), fmt.Sprintf("%s.scopes[%d]", path, i), "scope %q: a host name or campus service", s)
		}
	}
	switch e.Kind {
	case KindDocument:
		v.document(&e, at, path)
	case KindBuiltin:
		v.builtin(&e, at, path)
	case KindRemote:
		v.remote(&e, at, path)
	case "":
		v.errAt(at("kind"), path+".kind", "kind is required (document, remote or builtin)")
	default:
		v.errAt(at("kind"), path+".kind", "unknown kind %q (use document, remote or builtin)", e.Kind)
	}
	if e.Kind != KindRemote && (e.Endpoint != "" || e.Auth != "") {
		v.errAt(at("endpoint"), path+".endpoint", "endpoint and auth are for remote entries only")
	}
	if e.Cloud != nil {
		v.cloud(e.Cloud, at("cloud"), path+".cloud")
		if !slices.Contains(e.Requires, "cloud") {
			v.errAt(at("requires"), path+".requires", "a plugin with a cloud declaration requires cloud")
		}
	}
	return &e
}

func (v *validator) document(e *Entry, at func(string) int, path string) {
	if e.Source == "" {
		v.errAt(at("source"), path+".source", "source (the install link) is required for a document")
		return
	}
	if _, err := plugin.ResolveLink(e.Source); err != nil {
		v.errAt(at("source"), path+".source", "source is not an install link: %v", err)
	}
}

// OfficialTree is the folder of the official repository whose subfolders
// are the built-in plugins.
const OfficialTree = "https://github.com/pkuinfo/pku-harness-plugins/tree/main/plugins/"

func (v *validator) builtin(e *Entry, at func(string) int, path string) {
	if v.o.Builtins != nil && !slices.Contains(v.o.Builtins, e.ID) {
		v.errAt(at("id"), path+".id", "no built-in plugin %q in this app (it has %s)", e.ID, strings.Join(v.o.Builtins, ", "))
	}
	if e.Source != "" && e.Source != OfficialTree+e.ID {
		v.errAt(at("source"), path+".source", "a built-in's source is %s%s", OfficialTree, e.ID)
	}
}

func (v *validator) remote(e *Entry, at func(string) int, path string) {
	if e.Endpoint == "" {
		v.errAt(at("endpoint"), path+".endpoint", "endpoint (the MCP URL) is required for a remote entry")
		return
	}
	if err := checkEndpoint(e.Endpoint); err != nil {
		v.errAt(at("endpoint"), path+".endpoint", "%v", err)
		return
	}
	if h := endpointHost(e.Endpoint); h != "" {
		v.add(diag.Warning, at("endpoint"), path+".endpoint", "endpoint %q is on %s: from the registry it reaches each student’s own machine or network, not the author’s server (use a public https URL)", e.Endpoint, h)
	}
	switch e.Auth {
	case "", "none", "bearer":
	default:
		v.errAt(at("auth"), path+".auth", "auth %q: use none or bearer", e.Auth)
	}
	if !slices.Contains(e.Requires, "network") {
		v.add(diag.Warning, at("requires"), path+".requires", "a remote plugin requires network")
	}
	if e.Source != "" {
		if u, err := url.Parse(e.Source); err != nil || u.Scheme != "https" || u.Host == "" {
			v.errAt(at("source"), path+".source", "source %q: an https link to the plugin's repository", e.Source)
		}
	}
	if v.o.RemoteName != nil {
		name, err := v.o.RemoteName(e.Endpoint, e.Auth == "bearer")
		switch {
		case err != nil:
			v.errAt(at("endpoint"), path+".endpoint", "the MCP server did not answer: %v", err)
		case name != e.ID:
			v.errAt(at("id"), path+".id", "the MCP server at %s is named %q; its name must equal the registry id %q", e.Endpoint, name, e.ID)
		}
	}
}

// checkEndpoint is https, or plain http to a loopback or private host
// (mcpurl.Check's rule, seed 003 §4).
func checkEndpoint(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("endpoint %q is not a URL", raw)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if plugin.LoopbackHost(u.Hostname()) {
			return nil
		}
		return fmt.Errorf("endpoint %q: use https (plain http only to localhost)", raw)
	}
	return fmt.Errorf("endpoint %q: use https", raw)
}

// endpointHost names where a local endpoint points ("this machine", "a
// private network"), or "" for a public one.
func endpointHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	h := u.Hostname()
	if plugin.LoopbackHost(h) || strings.HasSuffix(strings.ToLower(h), ".localhost") {
		return "this machine"
	}
	if ip, err := netip.ParseAddr(h); err == nil {
		ip = ip.Unmap()
		if ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsUnspecified() {
			return "a private network"
		}
	}
	return ""
}

func (v *validator) cloud(c *Cloud, off int, path string) {
	if c.Protocol != 0 && c.Protocol != 1 {
		v.errAt(off, path+".protocol", "protocol %d: the Cloud protocol is 1", c.Protocol)
	}
	if len(c.Uses) == 0 {
		v.errAt(off, path+".uses", "uses is required: the Cloud services the plugin uses (%s)", strings.Join(CloudServices, ", "))
	}
	for i, u := range c.Uses {
		if !slices.Contains(CloudServices, u) {
			v.errAt(off, path+".uses["+strconv.Itoa(i)+"]", "unknown Cloud service %q (use %s)", u, strings.Join(CloudServices, ", "))
		}
	}
	if c.E2E == nil {
		v.errAt(off, path+".e2e", "e2e is required: whether stored data must be end-to-end encrypted")
	}
	switch {
	case c.Disclosure == nil || len(c.Disclosure.Zh) == 0:
		v.errAt(off, path+".disclosure", "disclosure.zh is required: in plain words, what data leaves the device")
	case len(c.Disclosure.En) != len(c.Disclosure.Zh):
		v.errAt(off, path+".disclosure.en", "disclosure.en has %d lines, disclosure.zh %d; give each line in English", len(c.Disclosure.En), len(c.Disclosure.Zh))
	default:
		for i, s := range c.Disclosure.Zh {
			if strings.TrimSpace(s) == "" || strings.TrimSpace(c.Disclosure.En[i]) == "" {
				v.errAt(off, fmt.Sprintf("%s.disclosure[%d]", path, i), "an empty disclosure line")
			}
		}
	}
	if c.Backend != nil {
		if c.Backend.Kind != "external" {
			v.errAt(off, path+".backend.kind", "backend.kind %q: the only kind is external", c.Backend.Kind)
		}
		if u, err := url.Parse(c.Backend.URL); err != nil || u.Scheme != "https" || u.Host == "" {
			v.errAt(off, path+".backend.url", "backend.url %q: an https URL", c.Backend.URL)
		}
	}
}

// entryFields are the JSON fields of an Entry.
var entryFields = []string{"id", "name", "description", "author", "kind", "icon", "source", "endpoint", "auth",
	"requires", "scopes", "tags", "verified", "cloud"}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func characters(n int) string {
	if n == 1 {
		return "1 character"
	}
	return strconv.Itoa(n) + " characters"
}

func jsonKind(k string) string {
	switch k {
	case "slice":
		return "a list"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "ptr", "struct":
		return "an object"
	case "int", "float64":
		return "a number"
	}
	return k
}
