package agent

import (
	"fmt"
	"net/url"
	"strings"
	"unicode"
)

// MaxKeyLen is the longest API key a change takes, in bytes.
const MaxKeyLen = 4096

// Change is one change of the model settings, as `harness model set` and
// PUT /v1/model ask for it: a preset fills BaseURL and Model first, then
// BaseURL and Model (when not empty) override them. APIKey nil keeps the
// stored key (unless the service moves, see Apply); a pointer to "" removes
// it; else it is the new key.
type Change struct {
	Preset  string  `json:"preset"`
	BaseURL string  `json:"baseURL"`
	Model   string  `json:"model"`
	APIKey  *string `json:"apiKey"`
}

// Changed is what Apply made of a Change: the configuration to save, and
// whether the stored key was dropped because the service moved to another
// origin with no new key given (DroppedFor is the origin's host it was
// entered for). SetKey reports that SaveConfig must write the key (a new
// key, its removal, or the drop).
type Changed struct {
	Config     Config
	KeyDropped bool
	DroppedFor string
	SetKey     bool
}

// The kinds of ChangeError.
const (
	ChangeNoPreset = "no_preset" // Preset names no preset
	ChangeBaseURL  = "base_url"  // the base URL is not usable (CheckBaseURL)
	ChangeModel    = "model"     // the model name is empty, too long or has control characters
	ChangeMissing  = "missing"   // the result has no base URL or no model
	ChangeKey      = "key"       // the key is not one word of at most MaxKeyLen bytes
	// ChangeEnvKey: the key in use comes from $OPENAI_API_KEY and the change
	// would move the service it is sent to.
	ChangeEnvKey = "env_key"
)

// ChangeError is why Apply refused a change: Kind (a Change… constant),
// Field (the Change field at fault: preset, baseURL, model, apiKey) and the
// reason in English. A face words it in its own terms (a flag, a JSON field).
type ChangeError struct {
	Kind, Field string
	Value       string // the value at fault (a preset's name, the base URL), "" when none
	Msg         string
}

// Error is the reason, with the field.
func (e *ChangeError) Error() string { return e.Field + ": " + e.Msg }

// Apply merges ch into the stored configuration (LoadConfig without the
// environment) by the rules every face shares (seed 003: a key goes only
// to the service it was entered for):
//   - a preset, then a base URL and a model, replace the stored ones; the
//     base URL must pass CheckBaseURL and the model be 1 to 200 characters
//     without control characters;
//   - a new key is one word of at most MaxKeyLen bytes;
//   - with no new key, a stored key is dropped when the base URL moves to
//     another origin (scheme and host);
//   - when getenv gives $OPENAI_API_KEY and no $OPENAI_BASE_URL, the key in
//     use is the environment's and goes to the stored base URL: moving that
//     URL to another origin is refused (ChangeEnvKey), since the key would
//     then be sent there.
//
// getenv may be nil (no environment). The error is a *ChangeError.
func Apply(stored Config, ch Change, getenv func(string) string) (*Changed, error) {
	c := stored
	old := stored.BaseURL
	if ch.Preset != "" {
		p := PresetByName(ch.Preset)
		if p == nil {
			return nil, &ChangeError{Kind: ChangeNoPreset, Field: "preset", Value: ch.Preset, Msg: fmt.Sprintf("no preset %q", ch.Preset)}
		}
		c.BaseURL, c.Model = p.BaseURL, p.Model
	}
	if s := strings.TrimSpace(ch.BaseURL); s != "" {
		c.BaseURL = s
	}
	if s := strings.TrimSpace(ch.Model); s != "" {
		c.Model = s
	}
	if c.BaseURL == "" || c.Model == "" {
		f := "baseURL"
		if c.BaseURL != "" {
			f = "model"
		}
		return nil, &ChangeError{Kind: ChangeMissing, Field: f, Msg: "give a base URL and a model (or a preset)"}
	}
	if err := CheckBaseURL(c.BaseURL); err != nil {
		return nil, &ChangeError{Kind: ChangeBaseURL, Field: "baseURL", Value: c.BaseURL, Msg: strings.TrimPrefix(err.Error(), "--base-url ")}
	}
	if len(c.Model) > 200 || strings.ContainsFunc(c.Model, unicode.IsControl) {
		return nil, &ChangeError{Kind: ChangeModel, Field: "model", Value: c.Model, Msg: "give the model's name (1 to 200 characters, e.g. deepseek-chat)"}
	}
	out := &Changed{}
	if ch.APIKey != nil {
		k := strings.TrimSpace(*ch.APIKey)
		if len(k) > MaxKeyLen || strings.ContainsFunc(k, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
			return nil, &ChangeError{Kind: ChangeKey, Field: "apiKey", Msg: fmt.Sprintf("an API key is one word of at most %d bytes, without spaces", MaxKeyLen)}
		}
		c.APIKey, out.SetKey = k, true
	}
	moved := old != "" && !SameOrigin(old, c.BaseURL)
	if getenv != nil && getenv(EnvAPIKey) != "" && getenv(EnvBaseURL) == "" && moved {
		return nil, &ChangeError{Kind: ChangeEnvKey, Field: "baseURL", Value: c.BaseURL,
			Msg: fmt.Sprintf("the API key comes from $%s, which would then be sent to %s: unset $%s (or set $%s) to change the service",
				EnvAPIKey, ProviderName(c.BaseURL), EnvAPIKey, EnvBaseURL)}
	}
	if ch.APIKey == nil && c.APIKey != "" && !SameOrigin(old, c.BaseURL) {
		c.APIKey, out.KeyDropped, out.SetKey = "", true, true
		if u, err := url.Parse(old); err == nil {
			out.DroppedFor = u.Host
		}
	}
	out.Config = c
	return out, nil
}

// SameOrigin reports whether base URLs a and b have the same scheme and host
// (case-insensitive); an unparsable one has no origin.
func SameOrigin(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Host, ub.Host)
}
