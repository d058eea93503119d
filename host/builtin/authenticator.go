package builtin

import (
	_ "embed"
	"net/url"
	"strings"
	"time"

	"github.com/pkuinfo/harness/host/abilities"
	"github.com/pkuinfo/harness/i18n"
	"github.com/pkuinfo/harness/plugin"
)

// The authenticator plugin: the IAAA authenticator (手机令牌), the tool face
// of the otp ability over its one secret (migration 100), the secret
// `harness otp set` stores and verify.treehole uses.

//go:embed ui/authenticator/code.json
var authenticatorWidget []byte

//go:embed ui/authenticator/main.json
var authenticatorScreen []byte

// OTPSetInput is authenticator.set's input.
type OTPSetInput struct {
	URI string `json:"uri" jsonschema:"the otpauth://totp/… link of the IAAA authenticator, or its Base32 secret" harness:"min=16,max=2048,trim"`
}

// OTPSet is authenticator.set's result; Account is the URI's label
// (issuer:account), "" for a bare secret.
type OTPSet struct {
	Set     bool   `json:"set"`
	Account string `json:"account"`
}

func otpSet(c *Context, in OTPSetInput) (OTPSet, error) {
	if err := abilities.SetOTPSecret(c, c.Store(), in.URI, c.Now); err != nil {
		return OTPSet{}, Errorf("%v", err)
	}
	out := OTPSet{Set: true}
	if u, err := url.Parse(in.URI); err == nil && strings.EqualFold(u.Scheme, "otpauth") {
		out.Account = strings.TrimPrefix(u.Path, "/")
	}
	return out, nil
}

// OTPCode is authenticator.code's result: the 6-digit code and the
// seconds until the next one, or set false when no secret is stored.
type OTPCode struct {
	Set         bool    `json:"set"`
	Code        *string `json:"code"`
	SecondsLeft int     `json:"secondsLeft"`
	ValidUntil  *int64  `json:"validUntil"` // Unix ms when the code changes
}

func otpCode(c *Context, _ Empty) (OTPCode, error) {
	var code *string
	if err := c.Ability("otp.code", nil, &code); err != nil {
		return OTPCode{}, err
	}
	out := OTPCode{Set: code != nil, Code: code}
	if code != nil {
		out.SecondsLeft = 30 - int(c.Now.Unix()%30)
		until := (c.Now.Unix()/30 + 1) * 30_000
		out.ValidUntil = &until
	}
	return out, nil
}

// OTPCleared is authenticator.clear's result.
type OTPCleared struct {
	Cleared bool `json:"cleared"`
}

func otpClear(c *Context, _ Empty) (OTPCleared, error) {
	if err := abilities.ClearOTPSecret(c, c.Store()); err != nil {
		return OTPCleared{}, err
	}
	return OTPCleared{Cleared: true}, nil
}

// OTPStatus is authenticator.status's result.
type OTPStatus struct {
	Set bool `json:"set"`
}

func otpStatus(c *Context, _ Empty) (OTPStatus, error) {
	_, ok, err := abilities.OTPSecret(c, c.Store())
	return OTPStatus{Set: ok}, err
}

// Authenticator is the IAAA authenticator: bind it from an otpauth://
// link, show the current code, unbind it. Binding and unbinding a
// credential are userOnly: only a person's own tap does them.
var Authenticator = &Plugin{
	ID:          "authenticator",
	Name:        "手机令牌",
	Description: "北大统一身份认证(IAAA)的手机令牌:绑定后显示当前验证码,二次验证时自动填写。",
	Version:     "0.1.0",
	Icon:        "key",
	Abilities:   []string{"otp"},
	I18n: I18n{
		En: EnText{
			Name:        "IAAA authenticator",
			Description: "The IAAA authenticator (手机令牌): once bound it shows the current code and fills in second-factor checks.",
			Tools: map[string]ToolText{
				"set": {Title: "Bind the authenticator"}, "code": {Title: "Current code"},
				"clear": {Title: "Unbind the authenticator"}, "status": {Title: "Authenticator status"},
			},
			Widgets:     map[string]UIText{"code": {Title: "IAAA authenticator", Description: "The current code of the IAAA authenticator (手机令牌)."}},
			Screens:     map[string]UIText{"main": {Title: "IAAA authenticator"}},
			Settings:    map[string]SettingText{"main": {Title: "IAAA authenticator", Subtitle: "Second-factor codes"}},
			DataSources: map[string]UIText{"code": {Title: "Current code"}},
		},
		Strings: Strings{
			i18n.Zh: {"none": "还没有绑定手机令牌", "code": func(code string, left int) string { return "验证码 " + code + "(" + itoa(left) + " 秒后更新)" }},
			i18n.En: {"none": "No authenticator yet", "code": func(code string, left int) string { return "Code " + code + " (" + itoa(left) + " s left)" }},
		},
	},
	Instructions: `手机令牌:二次验证需要验证码时,verify 会自动使用已绑定的手机令牌;authenticator__status 说明是否已绑定。绑定和解绑只能由用户在设置里操作。`,
	DataSources:  []DataSource{{Name: "code", Title: "当前验证码", Tool: "code", TTL: 30 * time.Second}},
	Widgets:      []UI{{Name: "code", Document: authenticatorWidget}},
	Screens:      []UI{{Name: "main", Document: authenticatorScreen}},
	Settings:     []Setting{{Screen: "main", Title: "手机令牌", Subtitle: "二次验证的验证码", Icon: "key"}},
	Tools: []*Tool{
		{Name: "set", Title: "绑定手机令牌", Effect: plugin.EffectWrite, UserOnly: true, Run: Func(otpSet),
			Description: "Store the IAAA authenticator secret from its otpauth:// link (user only)."},
		{Name: "code", Title: "当前验证码", Effect: plugin.EffectRead, UserOnly: true, Run: Func(otpCode),
			Description: "The current 6-digit code of the bound IAAA authenticator and the seconds it stays valid; set false when none is bound. User only: the code is a secret for the person's eyes, never for the assistant (verify uses it on its own)."},
		{Name: "clear", Title: "解除绑定", Effect: plugin.EffectWrite, UserOnly: true, Run: Func(otpClear),
			Description: "Forget the authenticator secret (user only)."},
		{Name: "status", Title: "令牌状态", Effect: plugin.EffectRead, Run: Func(otpStatus),
			Description: "Whether an IAAA authenticator is bound."},
	},
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return string(rune('0'+n/10)) + string(rune('0'+n%10))
}
