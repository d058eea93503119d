package fnrun

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/pkuinfo/harness/cloud/protocol"
	"github.com/pkuinfo/harness/plugin"
)

// SecretBinding is one operator secret and the plugin identity it is given to: the function of
// a document gets the secret only when the document was fetched from Link, is plugin Plugin,
// declares Name in server.secrets and, when Hash is set, has that content hash. Under
// PolicyOpen the document's exact version must also be on the allowlist (Config.Allow), since
// whoever controls a link can change what it serves.
//
// The function never holds the value: `secrets.NAME` is a stand-in the runner swaps for the
// value only in the places Uses names, on the request as it leaves.
type SecretBinding struct {
	Plugin string // the plugin id the document must have; it names the value's variable
	Name   string // the secret's name in server.secrets, ^[A-Z][A-Z0-9_]*$
	Link   string // the approved install link, compared exactly
	Hash   string // "" for any version at Link, else the pinned "sha256:HEX"
	// Uses are where the value may be sent; none means only crypto.hmacSha256 may use it.
	Uses  []SecretUse
	Value string // the secret itself; never logged, never shown
}

// SecretUse is one place a secret may be sent: a request header or a query parameter of
// requests to one host. Exactly one of Header and Query is set.
type SecretUse struct {
	Host   string // the exact host, lower case, no port: "api.weather.example"
	Header string // a header name, canonical form ("X-Api-Key"), or ""
	Query  string // a query parameter name, or ""
}

// String is the use as CLOUD_FN_SECRETS writes it: header:NAME@HOST or query:NAME@HOST.
func (u SecretUse) String() string {
	if u.Header != "" {
		return "header:" + u.Header + "@" + u.Host
	}
	return "query:" + u.Query + "@" + u.Host
}

var (
	secretNameRe = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
	pluginIDRe   = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)
	headerNameRe = regexp.MustCompile(`^[A-Za-z0-9!#$%&'*+.^_|~-]{1,128}$`)
	queryNameRe  = regexp.MustCompile(`^[A-Za-z0-9._~-]{1,128}$`)
)

// ParseSecrets reads CLOUD_FN_SECRETS, the operator's secret bindings: entries separated by
// newlines or ";", each the whitespace-separated fields
//
//	PLUGIN NAME LINK[@sha256:HEX] [USE ...]
//
// where USE is header:HEADER@HOST or query:PARAM@HOST. The value of each entry is the
// environment variable SecretEnv(PLUGIN, NAME), read with lookup. An error names the entry and
// what is wrong with it: a bad field, a value not set, or the same PLUGIN NAME LINK twice.
func ParseSecrets(s string, lookup func(string) (string, bool)) ([]SecretBinding, error) {
	var out []SecretBinding
	seen := map[string]bool{}
	n := 0
	for _, line := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == ';' }) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		n++
		where := fmt.Sprintf("CLOUD_FN_SECRETS entry %d", n)
		if len(f) < 3 {
			return nil, fmt.Errorf("%s %q: want PLUGIN NAME LINK[@sha256:HEX] [header:NAME@HOST | query:NAME@HOST ...]", where, strings.TrimSpace(line))
		}
		b := SecretBinding{Plugin: f[0], Name: f[1], Link: f[2]}
		if at := strings.LastIndex(b.Link, "@sha256:"); at >= 0 {
			b.Link, b.Hash = b.Link[:at], b.Link[at+1:]
		}
		for _, u := range f[3:] {
			use, err := parseUse(u)
			if err != nil {
				return nil, fmt.Errorf("%s (%s %s): %w", where, b.Plugin, b.Name, err)
			}
			b.Uses = append(b.Uses, use)
		}
		if err := b.validate(); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		key := b.Plugin + " " + b.Name + " " + b.Link
		if seen[key] {
			return nil, fmt.Errorf("%s: %s %s is bound to %s twice", where, b.Plugin, b.Name, b.Link)
		}
		seen[key] = true
		v, ok := lookup(SecretEnv(b.Plugin, b.Name))
		if !ok || v == "" {
			return nil, fmt.Errorf("%s (%s %s): %s is not set", where, b.Plugin, b.Name, SecretEnv(b.Plugin, b.Name))
		}
		b.Value = v
		out = append(out, b)
	}
	return out, nil
}

func parseUse(s string) (SecretUse, error) {
	kind, rest, _ := strings.Cut(s, ":")
	name, host, ok := strings.Cut(rest, "@")
	if !ok || name == "" || host == "" {
		return SecretUse{}, fmt.Errorf("use %q: want header:NAME@HOST or query:NAME@HOST", s)
	}
	switch kind {
	case "header":
		if !headerNameRe.MatchString(name) {
			return SecretUse{}, fmt.Errorf("use %q: %q is not a header name", s, name)
		}
		return SecretUse{Host: strings.ToLower(host), Header: http.CanonicalHeaderKey(name)}, nil
	case "query":
		if !queryNameRe.MatchString(name) {
			return SecretUse{}, fmt.Errorf("use %q: a query parameter name is letters, digits and ._~-", s)
		}
		return SecretUse{Host: strings.ToLower(host), Query: name}, nil
	}
	return SecretUse{}, fmt.Errorf("use %q: want header:NAME@HOST or query:NAME@HOST", s)
}

// validate checks a binding's fields (not its value).
func (b *SecretBinding) validate() error {
	if !pluginIDRe.MatchString(b.Plugin) {
		return fmt.Errorf("plugin %q: want a plugin id (lower case letters, digits, -)", b.Plugin)
	}
	if !secretNameRe.MatchString(b.Name) {
		return fmt.Errorf("secret %q: want ^[A-Z][A-Z0-9_]*$, as in server.secrets", b.Name)
	}
	if n := len(b.Link); n < 1 || n > 2048 || !strings.HasPrefix(b.Link, "https://") {
		return fmt.Errorf("%s %s: link %q: want the plugin's https install link (1–2048 characters)", b.Plugin, b.Name, b.Link)
	}
	if b.Hash != "" && !protocol.ValidContentHash(b.Hash) {
		return fmt.Errorf("%s %s: hash %q: want sha256: and 64 lowercase hex digits", b.Plugin, b.Name, b.Hash)
	}
	for _, u := range b.Uses {
		if err := plugin.CheckHost(u.Host); err != nil || strings.HasPrefix(u.Host, "*") {
			return fmt.Errorf("%s %s: use %s: the host must be one exact public host name", b.Plugin, b.Name, u)
		}
		if (u.Header == "") == (u.Query == "") {
			return fmt.Errorf("%s %s: use %s: name a header or a query parameter", b.Plugin, b.Name, u)
		}
	}
	return nil
}

// grant returns the bindings the document d (loaded as p) is given, by secret name: those
// whose identity matches (plugin id, link, pinned hash) for a name the document declares, and
// under PolicyOpen only when d's exact version is on the allowlist.
func (r *Runner) grant(d protocol.DocumentRef, p *plugin.Plugin) map[string]*SecretBinding {
	out := map[string]*SecretBinding{}
	if p.Manifest.Server == nil || len(p.Manifest.Server.Secrets) == 0 {
		return out
	}
	if r.cfg.Policy == PolicyOpen && !r.listed(d) {
		return out
	}
	for _, name := range p.Manifest.Server.Secrets {
		for i := range r.cfg.Secrets {
			b := &r.cfg.Secrets[i]
			if b.Name == name && b.Plugin == p.Manifest.ID && b.Link == d.Link &&
				(b.Hash == "" || b.Hash == d.Hash) && d.Hash == p.Hash {
				out[name] = b
				break
			}
		}
	}
	return out
}

// listed reports whether d's exact version is on the allowlist.
func (r *Runner) listed(d protocol.DocumentRef) bool {
	for _, a := range r.cfg.Allow {
		if a == d {
			return true
		}
	}
	return false
}
