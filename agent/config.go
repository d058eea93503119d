package agent

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/pkuinfo/harness/host/vault"
)

// Config is which model the assistant talks to (docs/HOST-API.md "The AI provider"):
// an OpenAI-compatible base URL, a model name and an API key.
type Config struct {
	BaseURL string `json:"baseURL"`
	Model   string `json:"model"`
	// APIKey is kept in its own 0600 file, never in model.json, and never
	// printed.
	APIKey string `json:"-"`
}

// The files of the model configuration in the data directory.
const (
	ConfigFile = "model.json" // {"baseURL","model"}
	KeyFile    = "model.key"  // the API key, mode 0600
)

// The environment variables that override the stored configuration
// (docs/DECISIONS.md §11 "Model configuration").
const (
	EnvBaseURL = "OPENAI_BASE_URL"
	EnvAPIKey  = "OPENAI_API_KEY"
	EnvModel   = "HARNESS_MODEL"
)

// Source says where each part of a loaded Config came from: "stored",
// "env" or "" (not set).
type Source struct {
	BaseURL, Model, APIKey string
}

// LoadConfig reads the configuration `harness model set` stored in dir and
// applies the environment variables over it (getenv is os.Getenv in the
// CLI; tests pass their own). A missing file is no error; a malformed one
// is, naming the file.
func LoadConfig(dir string, getenv func(string) string) (Config, Source, error) {
	var c Config
	var src Source
	// model.json, model.key, then model.json looked at again: SaveConfig removes the old key
	// before it writes another base URL (each write a new file, renamed into place), so a key
	// read while model.json stayed the same file belongs to its base URL.
	var b, k []byte
	var err, kerr error
	cf := filepath.Join(dir, ConfigFile)
	for range 10 {
		before, _ := os.Stat(cf)
		b, err = os.ReadFile(cf)
		k, kerr = os.ReadFile(filepath.Join(dir, KeyFile))
		after, _ := os.Stat(cf)
		if sameFile(before, after) {
			break
		}
	}
	switch {
	case err == nil:
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return c, src, fmt.Errorf("%s: %v", filepath.Join(dir, ConfigFile), err)
		}
		if c.BaseURL != "" {
			src.BaseURL = "stored"
		}
		if c.Model != "" {
			src.Model = "stored"
		}
	case !errors.Is(err, fs.ErrNotExist):
		return c, src, err
	}
	switch err := kerr; {
	case err == nil:
		key, err := openKey(dir, strings.TrimSpace(string(k)))
		if err != nil {
			return c, src, err
		}
		c.APIKey = key
		if c.APIKey != "" {
			src.APIKey = "stored"
		}
	case !errors.Is(err, fs.ErrNotExist):
		return c, src, err
	}
	if getenv != nil {
		if v := getenv(EnvBaseURL); v != "" {
			c.BaseURL, src.BaseURL = v, "env"
		}
		if v := getenv(EnvModel); v != "" {
			c.Model, src.Model = v, "env"
		}
		if v := getenv(EnvAPIKey); v != "" {
			c.APIKey, src.APIKey = v, "env"
		}
	}
	return c, src, nil
}

// sameFile reports whether a and b are the same file unchanged (both nil: no file).
func sameFile(a, b os.FileInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// SaveConfig writes c to dir: base URL and model to model.json, the key,
// when setKey, to model.key (0600, sealed with the data directory's
// vault.Box, so the file alone does not give the key away; an empty key
// removes the file). It
// checks the base URL first (http or https with a host) and writes
// nothing when it is bad.
func SaveConfig(dir string, c Config, setKey bool) error {
	if err := CheckBaseURL(c.BaseURL); err != nil {
		return err
	}
	if strings.TrimSpace(c.Model) == "" {
		return errors.New("--model: empty model name")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(c, "", "  ")
	kf := filepath.Join(dir, KeyFile)
	// A running serve reads both files whenever either changes (Reloading): the old key goes
	// first, then the new base URL is written, then the new key, so that no moment pairs one
	// service's key with another's base URL.
	if setKey {
		if err := os.Remove(kf); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if err := writeFile(filepath.Join(dir, ConfigFile), append(b, '\n')); err != nil {
		return err
	}
	if !setKey || c.APIKey == "" {
		return nil
	}
	sealed, err := sealKey(dir, c.APIKey)
	if err != nil {
		return err
	}
	return writeFile(kf, []byte(sealed+"\n"))
}

// sealedPrefix starts a model.key that holds the key sealed by the
// vault; a file without it holds the key in plain text (written by an
// older harness) and is still read.
const sealedPrefix = "sealed:"

// keyLabel binds the sealed key to its file (vault.Box.Seal).
const keyLabel = "model.key"

func sealKey(dir, key string) (string, error) {
	box, err := vault.Open(dir, vault.DefaultKeyring())
	if err != nil {
		return "", err
	}
	return sealedPrefix + base64.StdEncoding.EncodeToString(box.Seal(keyLabel, []byte(key))), nil
}

func openKey(dir, text string) (string, error) {
	enc, ok := strings.CutPrefix(text, sealedPrefix)
	if !ok {
		return text, nil
	}
	file := filepath.Join(dir, KeyFile)
	b, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return "", fmt.Errorf("%s: the sealed key is not Base64: %v (set it again: harness model set --api-key-stdin)", file, err)
	}
	box, err := vault.Open(dir, vault.DefaultKeyring())
	if err != nil {
		return "", err
	}
	key, err := box.Open(keyLabel, b)
	if err != nil {
		return "", fmt.Errorf("%s: %w (the vault key %s changed? set the key again: harness model set --api-key-stdin)", file, err, box.Where)
	}
	return string(key), nil
}

// KeyHint is what may be shown of an API key: "" when there is none,
// "set" when it is too short to show any of it, else "…" and its last
// four characters. The rest never leaves the host (the key is
// never returned by any route; docs/HOST-API.md "The AI provider").
func KeyHint(key string) string {
	switch {
	case key == "":
		return ""
	case len(key) < 16:
		return "set"
	}
	return "…" + key[len(key)-4:]
}

// writeFile replaces path with b, mode 0600, through a temporary file so
// that a crash leaves the old file or the new one.
func writeFile(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// CheckBaseURL says why u is not a usable base URL: it must be http or
// https with a host, without user info, query or fragment.
func CheckBaseURL(u string) error {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return fmt.Errorf("--base-url %q: want http(s)://HOST/PATH, e.g. https://api.deepseek.com/v1", u)
	}
	if p.User != nil || p.RawQuery != "" || p.Fragment != "" {
		return fmt.Errorf("--base-url %q: no user info, query or fragment (give the key with --api-key-stdin)", u)
	}
	return nil
}

// Preset is a model service students here use: a base URL and a default
// model (docs/HOST-API.md "The AI provider").
type Preset struct {
	Name    string `json:"name"`
	Title   string `json:"title"`   // in English (the CLI's and errors' wording)
	TitleZh string `json:"titleZh"` // in zh-Hans, for faces showing Chinese
	BaseURL string `json:"baseURL"`
	Model   string `json:"model"`
	// KeyURL is where to get an API key ("" for local servers).
	KeyURL string `json:"keyURL,omitempty"`
}

// Presets are the services `harness model presets` lists, in that order.
var Presets = []Preset{
	{Name: "deepseek", Title: "DeepSeek", TitleZh: "DeepSeek 深度求索", BaseURL: "https://api.deepseek.com/v1", Model: "deepseek-chat", KeyURL: "https://platform.deepseek.com/api_keys"},
	{Name: "qwen", Title: "Qwen (DashScope compatible mode)", TitleZh: "通义千问(DashScope 兼容模式)", BaseURL: "https://dashscope.aliyuncs.com/compatible-mode/v1", Model: "qwen-plus", KeyURL: "https://bailian.console.aliyun.com/?apiKey=1"},
	{Name: "moonshot", Title: "Moonshot / Kimi", TitleZh: "月之暗面 Kimi", BaseURL: "https://api.moonshot.cn/v1", Model: "kimi-k2-0905-preview", KeyURL: "https://platform.moonshot.cn/console/api-keys"},
	{Name: "zhipu", Title: "Zhipu GLM", TitleZh: "智谱 GLM", BaseURL: "https://open.bigmodel.cn/api/paas/v4", Model: "glm-4.6", KeyURL: "https://open.bigmodel.cn/usercenter/apikeys"},
	{Name: "siliconflow", Title: "SiliconFlow", TitleZh: "硅基流动 SiliconFlow", BaseURL: "https://api.siliconflow.cn/v1", Model: "deepseek-ai/DeepSeek-V3", KeyURL: "https://cloud.siliconflow.cn/account/ak"},
	{Name: "openai", Title: "OpenAI", TitleZh: "OpenAI", BaseURL: "https://api.openai.com/v1", Model: "gpt-4o-mini", KeyURL: "https://platform.openai.com/api-keys"},
	{Name: "ollama", Title: "Ollama (local)", TitleZh: "Ollama(本机)", BaseURL: "http://127.0.0.1:11434/v1", Model: "qwen2.5:7b"},
	{Name: "vllm", Title: "vLLM (local)", TitleZh: "vLLM(本机)", BaseURL: "http://127.0.0.1:8000/v1", Model: "Qwen/Qwen2.5-7B-Instruct"},
	{Name: "mock", Title: "Mock model (harness model mock)", TitleZh: "模拟模型(harness model mock)", BaseURL: "http://127.0.0.1:8789/v1", Model: "mock-agent"},
}

// PresetByName returns the preset called name, or nil.
func PresetByName(name string) *Preset {
	for i := range Presets {
		if Presets[i].Name == name {
			return &Presets[i]
		}
	}
	return nil
}

// ProviderName names the service at baseURL for errors: a preset's title
// when the URL is one of theirs, else the URL's host.
func ProviderName(baseURL string) string {
	u, err := url.Parse(baseURL)
	if err != nil {
		return "the model provider"
	}
	for _, p := range Presets {
		if pu, _ := url.Parse(p.BaseURL); pu != nil && pu.Host == u.Host {
			return p.Title + " (" + u.Host + ")"
		}
	}
	return u.Host
}
