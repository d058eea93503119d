package abilities

import (
	"context"
	"testing"

	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/lang/diag"
	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/plugin"
)

// The official grades and campus-events plugins run through the
// interpreter with these abilities against the Treehole stand-in: the
// shapes they rely on (the whole reply on success, { message } from
// treeholeSendCode, verification_required) are the ones Set returns.
func TestOfficialPluginsThroughVerify(t *testing.T) {
	th := &treeholeStandIn{needCourse: true, needLogin: false}
	s, _ := verifySet(t, th)
	grades, diags, err := plugin.LoadDir("../../plugins/grades")
	if err != nil || diag.HasErrors(diags) {
		t.Fatalf("load grades: %v %v", err, diags)
	}
	events, diags, err := plugin.LoadDir("../../plugins/campus-events")
	if err != nil || diag.HasErrors(diags) {
		t.Fatalf("load campus-events: %v %v", err, diags)
	}
	s.plugins = fakePlugins{"grades": grades, "campus-events": events}
	run := func(p *plugin.Plugin, tool, input string) string {
		t.Helper()
		var in any
		if input != "" {
			in, _ = expr.FromJSON([]byte(input))
		}
		v, err := interp.Run(context.Background(), p, tool, in, interp.Options{Abilities: s, Now: s.now})
		if err != nil {
			return "error: " + err.Error()
		}
		b, _ := expr.ToJSON(v, "")
		return string(b)
	}
	steps := []struct {
		p           *plugin.Plugin
		tool, input string
		want        string
	}{
		{grades, "summary", "", `{"status":"verification_required","kind":"course","methods":["sms","otp"],"message":"树洞需要验证后才能查看课程数据：填入手机令牌（IAAA 身份验证器）的 6 位验证码，或先发送短信验证码再填入。","next":"grades__sendCode"}`},
		{grades, "sendCode", `{"kind":"course"}`, `{"sent":true,"kind":"course","message":"发送成功"}`},
		{grades, "summary", `{"code":"246810","via":"sms"}`, `{"gpa":3.812,"computedGpa":null,"credits":0,"terms":[]}`},
		{grades, "scores", `{"code":"000000"}`, "error: tools/scores.yaml:36:5: steps[0] (let reply): ability verify.treehole: Treehole: 验证码错误 (code 40001)"},
	}
	for i, st := range steps {
		if got := run(st.p, st.tool, st.input); got != st.want {
			t.Errorf("step %d %s %s:\n got %s\nwant %s", i, st.tool, st.input, got, st.want)
		}
	}
	th.needLogin = true
	got := run(events, "events", `{"from":"2030-03-04"}`)
	want := `{"status":"verification_required","kind":"login","methods":["sms"],"message":"树洞需要短信验证：先发送验证码，再填入短信里的 6 位数字。","next":"campus-events__sendCode"}`
	if got != want {
		t.Errorf("campus-events:\n got %s\nwant %s", got, want)
	}
}
