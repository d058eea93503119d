package agent

import (
	"errors"
	"strings"
	"testing"
)

// TestApply: the model-settings change rule every face shares, as an attacker
// would push it (a key moved to another service, the environment's key sent
// elsewhere, a key with a newline, a model name with control characters).
func TestApply(t *testing.T) {
	ptr := func(s string) *string { return &s }
	stored := Config{BaseURL: "https://api.deepseek.com/v1", Model: "deepseek-chat", APIKey: "sk-stored"}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		name   string
		stored Config
		ch     Change
		getenv func(string) string
		want   Config
		drop   bool
		setKey bool
		kind   string // the ChangeError kind, "" for success
	}{
		{"preset to another service drops the key", stored, Change{Preset: "qwen"}, nil,
			Config{BaseURL: "https://dashscope.aliyuncs.com/compatible-mode/v1", Model: "qwen-plus"}, true, true, ""},
		{"same origin keeps the key", stored, Change{BaseURL: "https://api.deepseek.com/beta"}, nil,
			Config{BaseURL: "https://api.deepseek.com/beta", Model: "deepseek-chat", APIKey: "sk-stored"}, false, false, ""},
		{"origin case does not move it", stored, Change{BaseURL: "HTTPS://API.DEEPSEEK.COM/v1"}, nil,
			Config{BaseURL: "HTTPS://API.DEEPSEEK.COM/v1", Model: "deepseek-chat", APIKey: "sk-stored"}, false, false, ""},
		{"another port is another origin", stored, Change{BaseURL: "https://api.deepseek.com:8443/v1"}, nil,
			Config{BaseURL: "https://api.deepseek.com:8443/v1", Model: "deepseek-chat"}, true, true, ""},
		{"a new key with the move", stored, Change{Preset: "qwen", APIKey: ptr(" sk-new ")}, nil,
			Config{BaseURL: "https://dashscope.aliyuncs.com/compatible-mode/v1", Model: "qwen-plus", APIKey: "sk-new"}, false, true, ""},
		{"removing the key", stored, Change{APIKey: ptr("")}, nil,
			Config{BaseURL: "https://api.deepseek.com/v1", Model: "deepseek-chat"}, false, true, ""},
		{"the environment's key is not moved", stored, Change{Preset: "openai"}, env(map[string]string{EnvAPIKey: "sk-env"}), Config{}, false, false, ChangeEnvKey},
		{"the environment's key with its own base URL", stored, Change{Preset: "openai"}, env(map[string]string{EnvAPIKey: "sk-env", EnvBaseURL: "https://x.example/v1"}),
			Config{BaseURL: "https://api.openai.com/v1", Model: "gpt-4o-mini"}, true, true, ""},
		{"the environment's key, a new key given too", stored, Change{Preset: "openai", APIKey: ptr("sk-new")}, env(map[string]string{EnvAPIKey: "sk-env"}), Config{}, false, false, ChangeEnvKey},
		{"no preset", stored, Change{Preset: "nope"}, nil, Config{}, false, false, ChangeNoPreset},
		{"a key with a newline", stored, Change{APIKey: ptr("sk-a\nX-Evil: 1")}, nil, Config{}, false, false, ChangeKey},
		{"a key too long", stored, Change{APIKey: ptr(strings.Repeat("k", MaxKeyLen+1))}, nil, Config{}, false, false, ChangeKey},
		{"a model with a control character", stored, Change{Model: "m\x00"}, nil, Config{}, false, false, ChangeModel},
		{"a model too long", stored, Change{Model: strings.Repeat("m", 201)}, nil, Config{}, false, false, ChangeModel},
		{"a base URL with user info", stored, Change{BaseURL: "https://u:p@api.deepseek.com/v1"}, nil, Config{}, false, false, ChangeBaseURL},
		{"a base URL of another scheme", stored, Change{BaseURL: "file:///etc/passwd"}, nil, Config{}, false, false, ChangeBaseURL},
		{"nothing stored, no model", Config{}, Change{BaseURL: "https://api.deepseek.com/v1"}, nil, Config{}, false, false, ChangeMissing},
		{"nothing stored, a key with no service", Config{}, Change{APIKey: ptr("sk")}, nil, Config{}, false, false, ChangeMissing},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Apply(tc.stored, tc.ch, tc.getenv)
			if tc.kind != "" {
				var ce *ChangeError
				if !errors.As(err, &ce) || ce.Kind != tc.kind {
					t.Fatalf("err = %v, want kind %s", err, tc.kind)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Config != tc.want || got.KeyDropped != tc.drop || got.SetKey != tc.setKey {
				t.Errorf("got %+v, want %+v drop=%v setKey=%v", got, tc.want, tc.drop, tc.setKey)
			}
			if got.KeyDropped && got.DroppedFor != "api.deepseek.com" {
				t.Errorf("dropped for %q", got.DroppedFor)
			}
		})
	}
}
