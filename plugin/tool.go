package plugin

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/pkuinfo/harness/lang/expr"
)

var toolFields = []string{
	"title", "summary", "description", "effect", "input", "constants", "functions",
	"steps", "return", "untrusted", "userOnly", "onDemand",
}

var serverFunctionFields = []string{
	"description", "effect", "access", "cache", "input", "constants", "functions", "steps", "return",
}

// decodeShared decodes a shared file or inline map: { constants, functions }. Functions are
// defined in env in written order.
func decodeShared(f *fileDec, n *yaml.Node, file string, env *expr.Env) *Shared {
	sh := &Shared{File: file, Constants: expr.NewObject(0), Pos: Positions{}, src: f.file()}
	fs, ok := f.fields(n, "shared", "", "constants", "functions")
	if !ok {
		return sh
	}
	if x := fs.get("constants"); x != nil {
		sh.Constants = decodeConstants(f, x, "constants", sh.Pos)
	}
	if x := fs.get("functions"); x != nil {
		sh.Functions = decodeFunctions(f, x, "functions", env, sh.Pos)
	}
	return sh
}

func decodeConstants(f *fileDec, n *yaml.Node, what string, pos Positions) *expr.Object {
	obj := expr.NewObject(0)
	ps, _ := f.mapping(n, what, "")
	for _, p := range ps {
		if pos != nil {
			pos[what+"."+p.key] = f.pos(p.k)
		}
		v, ok := f.value(p.v, what+"."+p.key, "")
		if !ok {
			continue
		}
		obj.Set(p.key, v)
	}
	return obj
}

// decodeFunctions parses each function body and defines it in env, in written order, so a
// function may call the ones before it (docs/DECISIONS.md §4).
func decodeFunctions(f *fileDec, n *yaml.Node, what string, env *expr.Env, pos Positions) []*Function {
	ps, _ := f.mapping(n, what, "")
	var out []*Function
	for _, p := range ps {
		w := what + "." + p.key
		if pos != nil {
			pos[w] = f.pos(p.k)
		}
		body := f.exprField(p.v, w, "", env)
		if body == nil {
			continue
		}
		fn := &Function{Name: p.key, Body: body}
		out = append(out, fn)
		if body.Expr == nil {
			continue
		}
		if err := env.Define(p.key, body.Expr); err != nil {
			var e *expr.Error
			if ee, ok := err.(*expr.Error); ok {
				e = ee
				f.d.errorf(f.file(), body.FilePos(e.Pos), "", "%s: %s", w, e.Msg)
			} else {
				f.d.errorf(f.file(), f.pos(p.k), "", "%s: %v", w, err)
			}
		}
	}
	return out
}

// decodeTool decodes one tool's map. env is the plugin's Env; the tool gets a layer on top of it
// for its own functions. shared provides the constants the tool's own ones overlay.
func decodeTool(f *fileDec, name string, n *yaml.Node, env *expr.Env, shared *Shared, server bool) (*Tool, *fieldSet) {
	t := &Tool{Name: name, File: f.file(), Pos: Positions{}, Constants: expr.NewObject(0)}
	t.Env = env.Extend()
	known := toolFields
	what := "tool " + name
	if server {
		known = serverFunctionFields
		what = "server function " + name
	}
	fs, ok := f.fields(n, what, "", known...)
	t.Pos[""] = f.pos(n)
	if !ok {
		return nil, nil
	}
	for _, k := range fs.order {
		t.Pos[k] = f.pos(fs.get(k))
	}
	if x := fs.get("title"); x != nil {
		t.Title, _ = f.str(x, "title", "")
	}
	if x := fs.get("summary"); x != nil {
		t.Summary, _ = f.str(x, "summary", "")
	}
	if x := fs.get("description"); x != nil {
		t.Description, _ = f.str(x, "description", "")
	}
	if x := fs.get("effect"); x != nil {
		if s, ok := f.str(x, "effect", ""); ok {
			e, err := ParseEffect(s)
			if err != nil {
				f.errorf(x, "", "effect: %v", err)
			}
			t.Effect = e
		}
	}
	if x := fs.get("untrusted"); x != nil {
		t.Untrusted, _ = f.boolean(x, "untrusted", "")
	}
	if x := fs.get("userOnly"); x != nil {
		t.UserOnly, _ = f.boolean(x, "userOnly", "")
	}
	if x := fs.get("onDemand"); x != nil {
		t.OnDemand, _ = f.boolean(x, "onDemand", "")
	}
	if x := fs.get("input"); x != nil {
		ps, _ := f.mapping(x, "input", "")
		for _, p := range ps {
			if in := decodeInput(f, p.key, "input."+p.key, p.k, p.v, t, 0); in != nil {
				t.Input = append(t.Input, in)
			}
		}
	}
	if x := fs.get("constants"); x != nil {
		t.Constants = decodeConstants(f, x, "constants", t.Pos)
	}
	t.AllConstants = overlay(shared.Constants, t.Constants)
	if x := fs.get("functions"); x != nil {
		t.Functions = decodeFunctions(f, x, "functions", t.Env, t.Pos)
	}
	// The steps and the return share the plugin's parses where they can (fileDec.parseEnv). Every
	// name written under functions counts as the tool's own, defined or not.
	saved := *f
	f.root, f.local, f.localFuncs = env, t.Env, nil
	if x := fs.get("functions"); x != nil && x.Kind == yaml.MappingNode {
		for i := 0; i < len(x.Content); i += 2 {
			f.localFuncs = append(f.localFuncs, x.Content[i].Value)
		}
	}
	defer func() { f.root, f.local, f.localFuncs = saved.root, saved.local, saved.localFuncs }()
	if x := fs.get("steps"); x != nil {
		t.Steps = decodeSteps(f, x, "steps", t.Env, 0)
	}
	if x := fs.get("return"); x != nil {
		t.Return = f.exprField(x, "return", "", t.Env)
	}
	return t, fs
}

// overlay returns base's entries overlaid with top's (top wins, keeping base's order for names
// both define).
func overlay(base, top *expr.Object) *expr.Object {
	out := expr.NewObject(0)
	if base != nil {
		for _, k := range base.Keys() {
			v, _ := base.Get(k)
			out.Set(k, v)
		}
	}
	if top != nil {
		for _, k := range top.Keys() {
			v, _ := top.Get(k)
			out.Set(k, v)
		}
	}
	return out
}

var inputFields = []string{"type", "enum", "default", "optional", "description", "min", "max", "pattern", "trim", "items"}

// InputTypes are the input field types of the seed.
var InputTypes = []string{"string", "number", "integer", "boolean", "array", "object"}

// decodeInput decodes one input field; depth counts `items` nesting.
func decodeInput(f *fileDec, name, what string, k, n *yaml.Node, t *Tool, depth int) *InputField {
	in := &InputField{Name: name, Pos: f.pos(k)}
	t.Pos[what] = in.Pos
	fs, ok := f.fields(n, what, "", inputFields...)
	if !ok {
		return nil
	}
	for _, key := range fs.order {
		t.Pos[what+"."+key] = f.pos(fs.get(key))
	}
	if x := fs.get("type"); x != nil {
		in.Type, _ = f.str(x, what+".type", "")
	}
	if x := fs.get("enum"); x != nil {
		if x.Kind != yaml.SequenceNode || len(x.Content) == 0 {
			f.errorf(x, "", "%s.enum must be a non-empty list", what)
		} else {
			for i, c := range x.Content {
				if c.Kind != yaml.ScalarNode {
					f.errorf(c, "", "%s.enum[%d] must be a string, number or boolean, not %s", what, i, yamlKind(c))
					continue
				}
				v, _ := f.value(c, fmt.Sprintf("%s.enum[%d]", what, i), "")
				in.Enum = append(in.Enum, v)
			}
		}
	}
	if x := fs.get("default"); x != nil {
		in.Default, _ = f.value(x, what+".default", "")
		in.HasDefault = true
	}
	if x := fs.get("optional"); x != nil {
		in.Optional, _ = f.boolean(x, what+".optional", "")
	}
	if x := fs.get("trim"); x != nil {
		in.Trim, _ = f.boolean(x, what+".trim", "")
	}
	if x := fs.get("description"); x != nil {
		in.Description, _ = f.str(x, what+".description", "")
	}
	if x := fs.get("min"); x != nil {
		if v, ok := f.number(x, what+".min", ""); ok {
			in.Min = &v
		}
	}
	if x := fs.get("max"); x != nil {
		if v, ok := f.number(x, what+".max", ""); ok {
			in.Max = &v
		}
	}
	if x := fs.get("pattern"); x != nil {
		in.Pattern, _ = f.str(x, what+".pattern", "")
	}
	if x := fs.get("items"); x != nil {
		if depth >= 8 {
			f.errorf(x, "", "%s.items nests more than 8 levels", what)
		} else {
			in.Items = decodeInput(f, "items", what+".items", fs.key("items"), x, t, depth+1)
		}
	}
	if in.Type == "" && fs.get("type") == nil {
		in.Type = impliedType(in)
	}
	return in
}

// impliedType is the type an input field without `type` has: the type of its enum values (or of
// its default), "" when neither says.
func impliedType(in *InputField) string {
	kind := func(v any) string {
		switch x := v.(type) {
		case string:
			return "string"
		case bool:
			return "boolean"
		case float64:
			if x == float64(int64(x)) {
				return "integer"
			}
			return "number"
		case []any:
			return "array"
		case *expr.Object:
			return "object"
		}
		return ""
	}
	if len(in.Enum) > 0 {
		t := kind(in.Enum[0])
		for _, v := range in.Enum[1:] {
			k := kind(v)
			if k != t {
				if (k == "number" || k == "integer") && (t == "number" || t == "integer") {
					t = "number"
					continue
				}
				return ""
			}
		}
		return t
	}
	if in.HasDefault {
		t := kind(in.Default)
		if t == "integer" {
			t = "number"
		}
		return t
	}
	return ""
}

// stepKeys lists the keys each step kind accepts; the first key of each list introduces it.
var stepKeys = map[StepKind][]string{
	StepValue:    {"value", "let"},
	StepRequest:  {"request", "let", "as"},
	StepEach:     {"each", "let", "concurrency", "request", "as", "steps", "value", "return"},
	StepPaginate: {"paginate", "let", "as"},
	StepExtract:  {"extract", "let", "limit"},
	StepIf:       {"if", "then", "else"},
	StepCheck:    {"check", "error"},
	StepTry:      {"try", "catch"},
	StepKV:       {"kv", "let", "key", "value", "ttl"},
	StepCache:    {"cache", "let", "steps", "return"},
	StepCall:     {"call", "let", "input"},
	StepAbility:  {"ability", "let", "args"},
}

// kindOrder is the order in which a step's keys decide its kind: the keys that can only
// introduce a step first, then request and value, which also appear inside each and kv steps.
var kindOrder = []StepKind{
	StepEach, StepPaginate, StepExtract, StepIf, StepCheck, StepTry, StepKV, StepCache,
	StepCall, StepAbility, StepRequest, StepValue,
}

var allStepKeys = func() []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range kindOrder {
		for _, key := range stepKeys[k] {
			if !seen[key] {
				seen[key] = true
				out = append(out, key)
			}
		}
	}
	return out
}()

// maxStepDepth caps how deeply steps nest (if inside each inside try …).
const maxStepDepth = 16

// decodeSteps decodes a list of steps; path is "steps" or "steps[2].then".
func decodeSteps(f *fileDec, n *yaml.Node, path string, env *expr.Env, depth int) []*Step {
	if n.Kind != yaml.SequenceNode {
		f.errorf(n, "", "%s must be a list of steps, not %s", path, yamlKind(n))
		return nil
	}
	if depth > maxStepDepth {
		f.errorf(n, "", "%s: steps nest more than %d levels deep", path, maxStepDepth)
		return nil
	}
	out := make([]*Step, 0, len(n.Content))
	for i, c := range n.Content {
		if s := decodeStep(f, c, indexPath(path, i), env, depth); s != nil {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func decodeStep(f *fileDec, n *yaml.Node, base string, env *expr.Env, depth int) *Step {
	if n.Kind != yaml.MappingNode {
		f.errorf(n, "", "%s must be a step (a map such as { let: x, value: expr }), not %s", base, yamlKind(n))
		return nil
	}
	// A step has a handful of keys: its pairs, and below the accepted ones, live on the stack.
	var psBuf, keyBuf [8]pair
	ps := appendPairs(psBuf[:0], n)
	var kind StepKind
	for _, k := range kindOrder {
		if findVal(ps, stepKeys[k][0]) != nil {
			kind = k
			break
		}
	}
	s := &Step{Kind: kind, File: f.file(), Pos: f.pos(n), Concurrency: 1, pos: make([]keyPos, 0, len(ps)+1)}
	for _, p := range ps {
		s.setPos(p.key, f.pos(p.v))
	}
	if x := findVal(ps, "let"); x != nil {
		if name, ok := f.str(x, "let", base); ok {
			s.Let = name
		}
	}
	s.Path = base
	switch {
	case s.Let != "":
		s.Path = base + " (let " + s.Let + ")"
	case kind != 0:
		s.Path = base + " (" + kind.String() + ")"
	}
	step := s.Path
	if kind == 0 {
		unknown := false
		for _, p := range ps {
			if !contains(allStepKeys, p.key) {
				f.errorf(p.k, step, "unknown field %q in a step%s", p.key, suggest(p.key, allStepKeys))
				unknown = true
			}
		}
		if !unknown {
			f.errorf(n, step, "a step needs one of value, request, each, paginate, extract, if, check, try, kv, cache, call, ability")
		}
		return nil
	}
	allowed := stepKeys[kind]
	byKey := nodeMap(keyBuf[:0])
	for _, p := range ps {
		if !contains(allowed, p.key) {
			if contains(allStepKeys, p.key) {
				other := ""
				for _, k := range kindOrder {
					if stepKeys[k][0] == p.key {
						other = p.key
					}
				}
				if other != "" {
					f.errorf(p.k, step, "a step does one thing: it has both %s and %s", kind, other)
				} else {
					f.errorf(p.k, step, "%s is not a field of %s step (it takes %s)", p.key, article(kind), strings.Join(allowed, ", "))
				}
			} else {
				f.errorf(p.k, step, "unknown field %q in %s step%s", p.key, article(kind), suggest(p.key, allowed))
			}
			continue
		}
		byKey = append(byKey, p)
	}
	sub := func(key, name string) []*Step {
		if x := byKey.get(key); x != nil {
			return decodeSteps(f, x, base+"."+name, env, depth+1)
		}
		return nil
	}
	if x := byKey.get("as"); x != nil {
		s.As, _ = f.str(x, "as", step)
	}
	switch kind {
	case StepValue:
		s.Value = f.exprField(byKey.get("value"), "value", step, env)
	case StepRequest:
		s.Request = decodeRequest(f, byKey.get("request"), "request", step, env, s)
	case StepEach:
		s.Each = f.exprField(byKey.get("each"), "each", step, env)
		if x := byKey.get("concurrency"); x != nil {
			s.Concurrency, _ = f.integer(x, "concurrency", step)
		}
		if x := byKey.get("request"); x != nil {
			s.Request = decodeRequest(f, x, "request", step, env, s)
		}
		if x := byKey.get("value"); x != nil {
			s.Value = f.exprField(x, "value", step, env)
		}
		if x := byKey.get("steps"); x != nil {
			s.Steps = sub("steps", "steps")
		}
		if x := byKey.get("return"); x != nil {
			s.Return = f.exprField(x, "return", step, env)
		}
		bodies := 0
		for _, k := range []string{"request", "value", "steps"} {
			if byKey.get(k) != nil {
				bodies++
			}
		}
		switch {
		case bodies == 0:
			f.errorf(n, step, "each needs a body: request, value, or steps")
		case bodies > 1:
			f.errorf(n, step, "each takes one body: request, value, or steps (with an optional return)")
		}
		if byKey.get("return") != nil && byKey.get("steps") == nil {
			f.errorf(findKey(ps, "return"), step, "return in an each step goes with steps")
		}
	case StepPaginate:
		s.Paginate = decodePaginate(f, byKey.get("paginate"), step, env, s)
	case StepExtract:
		s.Extract = decodeExtract(f, byKey.get("extract"), step, env, s)
		if x := byKey.get("limit"); x != nil {
			s.Limit, _ = f.integer(x, "limit", step)
		}
	case StepIf:
		s.If = f.exprField(byKey.get("if"), "if", step, env)
		s.Then = sub("then", "then")
		s.Else = sub("else", "else")
		if byKey.get("then") == nil {
			f.errorf(n, step, "if needs then")
		}
	case StepCheck:
		s.Check = f.exprField(byKey.get("check"), "check", step, env)
		if x := byKey.get("error"); x != nil {
			s.Error = f.templateField(x, "error", step, env)
		} else {
			f.errorf(n, step, "check needs error: the message when the condition is false")
		}
	case StepTry:
		s.Try = sub("try", "try")
		s.Catch = sub("catch", "catch")
		if byKey.get("catch") == nil {
			f.errorf(n, step, "try needs catch")
		}
	case StepKV:
		if op, ok := f.str(byKey.get("kv"), "kv", step); ok {
			s.KV = op
			if op != "get" && op != "set" && op != "delete" {
				f.errorf(byKey.get("kv"), step, "kv must be get, set or delete, not %q", op)
			}
		}
		if x := byKey.get("key"); x != nil {
			s.Key = f.templateField(x, "key", step, env)
		} else {
			f.errorf(n, step, "kv needs key")
		}
		if x := byKey.get("value"); x != nil {
			s.Value = f.exprField(x, "value", step, env)
		}
		if x := byKey.get("ttl"); x != nil {
			s.TTL, _ = f.duration(x, "ttl", step)
		}
		switch s.KV {
		case "set":
			if byKey.get("value") == nil {
				f.errorf(n, step, "kv: set needs value")
			}
		case "get", "delete":
			if x := byKey.get("value"); x != nil {
				f.errorf(findKey(ps, "value"), step, "kv: %s takes no value", s.KV)
			}
			if x := byKey.get("ttl"); x != nil {
				f.errorf(findKey(ps, "ttl"), step, "kv: %s takes no ttl", s.KV)
			}
		}
	case StepCache:
		s.Cache = decodeCache(f, byKey.get("cache"), step, env)
		s.Steps = sub("steps", "steps")
		if x := byKey.get("return"); x != nil {
			s.Return = f.exprField(x, "return", step, env)
		}
		if byKey.get("steps") == nil {
			f.errorf(n, step, "cache needs steps: the steps whose value it caches")
		}
	case StepCall:
		if name, ok := f.str(byKey.get("call"), "call", step); ok {
			s.Call = name
		}
		if x := byKey.get("input"); x != nil {
			s.Input = f.exprField(x, "input", step, env)
		}
	case StepAbility:
		if name, ok := f.str(byKey.get("ability"), "ability", step); ok {
			s.Ability = name
			s.Group, s.Op, _ = strings.Cut(name, ".")
		}
		if x := byKey.get("args"); x != nil {
			s.Args = f.exprField(x, "args", step, env)
		}
	}
	return s
}

func findVal(ps []pair, key string) *yaml.Node {
	for _, p := range ps {
		if p.key == key {
			return p.v
		}
	}
	return nil
}

func findKey(ps []pair, key string) *yaml.Node {
	for _, p := range ps {
		if p.key == key {
			return p.k
		}
	}
	return nil
}

// RequestMethods are the HTTP methods a request step, and a paginate step's
// next.method, may use (seed 004 "Steps"; docs/PLUGIN-LANGUAGE.md
// "Validation").
var RequestMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"}

// RequestMethod returns m in upper case and true when it is one of
// RequestMethods, written in any case ("get" is GET). Anything else —
// another method (PROPFIND, CONNECT, TRACE), surrounding spaces, control
// characters — gives "" and false.
func RequestMethod(m string) (string, bool) {
	for _, ok := range RequestMethods {
		if len(m) == len(ok) && strings.EqualFold(m, ok) { // ASCII only: no ſ for s
			return ok, true
		}
	}
	return "", false
}

var requestFields = []string{"url", "campus", "method", "query", "headers", "body", "json", "form", "timeout", "as"}

// decodeRequest decodes a `request:` map. The seed's examples also write `as` inside the request;
// it is accepted there and stored on the step.
func decodeRequest(f *fileDec, n *yaml.Node, what, step string, env *expr.Env, s *Step) *Request {
	fs, ok := f.fields(n, what, step, requestFields...)
	if !ok {
		return nil
	}
	r := &Request{Pos: f.pos(n), Method: "GET"}
	if x := fs.get("campus"); x != nil {
		r.Campus, _ = f.str(x, what+".campus", step)
	}
	if x := fs.get("url"); x != nil {
		r.URL = f.templateField(x, what+".url", step, env)
	} else {
		f.errorf(n, step, "%s needs url", what)
	}
	if x := fs.get("method"); x != nil {
		if m, ok := f.str(x, what+".method", step); ok {
			var ok bool
			if r.Method, ok = RequestMethod(m); !ok {
				r.Method = strings.ToUpper(m)
				f.errorf(x, step, "%s.method must be GET, POST, PUT, PATCH, DELETE or HEAD, not %q", what, m)
			}
		}
	}
	mapValue := func(key string) *TemplateValue {
		x := fs.get(key)
		if x == nil {
			return nil
		}
		if x.Kind == yaml.SequenceNode || (x.Kind == yaml.ScalarNode && x.Tag != "!!str") {
			f.errorf(x, step, "%s.%s must be a map, not %s", what, key, yamlKind(x))
			return nil
		}
		return f.templateValue(x, what+"."+key, step, env)
	}
	r.Query = mapValue("query")
	r.Headers = mapValue("headers")
	r.Form = mapValue("form")
	if x := fs.get("json"); x != nil {
		r.JSON = f.templateValue(x, what+".json", step, env)
	}
	if x := fs.get("body"); x != nil {
		r.Body = f.templateField(x, what+".body", step, env)
	}
	bodies := 0
	for _, k := range []string{"body", "json", "form"} {
		if fs.has(k) {
			bodies++
		}
	}
	if bodies > 1 {
		f.errorf(n, step, "%s takes one of body, json and form", what)
	}
	if x := fs.get("timeout"); x != nil {
		r.Timeout, _ = f.duration(x, what+".timeout", step)
	}
	if x := fs.get("as"); x != nil && s != nil {
		s.setPos("as", f.pos(x))
		if s.As != "" {
			f.errorf(fs.key("as"), step, "as is written twice (in the step and in %s)", what)
		}
		s.As, _ = f.str(x, what+".as", step)
	}
	return r
}

func decodePaginate(f *fileDec, n *yaml.Node, step string, env *expr.Env, s *Step) *Paginate {
	fs, ok := f.fields(n, "paginate", step, "request", "next", "items", "max")
	if !ok {
		return nil
	}
	p := &Paginate{Pos: f.pos(n), Max: MaxPages}
	if x := fs.get("request"); x != nil {
		p.Request = decodeRequest(f, x, "paginate.request", step, env, s)
	} else {
		f.errorf(n, step, "paginate needs request")
	}
	if x := fs.get("next"); x != nil {
		p.Next = f.exprField(x, "paginate.next", step, env)
	} else {
		f.errorf(n, step, "paginate needs next: an expression that is null on the last page")
	}
	if x := fs.get("items"); x != nil {
		p.Items = f.exprField(x, "paginate.items", step, env)
	} else {
		f.errorf(n, step, "paginate needs items: an expression that picks each page's items")
	}
	if x := fs.get("max"); x != nil {
		p.Max, _ = f.integer(x, "paginate.max", step)
	}
	return p
}

func decodeExtract(f *fileDec, n *yaml.Node, step string, env *expr.Env, s *Step) *Extract {
	fs, ok := f.fields(n, "extract", step, "from", "each", "fields", "limit")
	if !ok {
		return nil
	}
	e := &Extract{Pos: f.pos(n)}
	if x := fs.get("from"); x != nil {
		e.From = f.exprField(x, "extract.from", step, env)
	} else {
		f.errorf(n, step, "extract needs from: the HTML to read")
	}
	if x := fs.get("each"); x != nil {
		s.setPos("extract.each", f.pos(x))
		e.Each, _ = f.str(x, "extract.each", step)
	} else {
		f.errorf(n, step, "extract needs each: a CSS selector for the items")
	}
	if x := fs.get("fields"); x != nil {
		ps, _ := f.mapping(x, "extract.fields", step)
		for _, p := range ps {
			src, ok := f.str(p.v, "extract.fields."+p.key, step)
			if !ok {
				continue
			}
			ef := &ExtractField{Name: p.key, Src: src, Pos: f.pos(p.v)}
			parts := splitPipes(src)
			ef.Selector = parts[0]
			for _, part := range parts[1:] {
				name, arg, _ := strings.Cut(part, " ")
				ef.Pipes = append(ef.Pipes, Pipe{Name: name, Arg: strings.TrimSpace(arg)})
			}
			e.Fields = append(e.Fields, ef)
		}
	} else {
		f.errorf(n, step, "extract needs fields")
	}
	if x := fs.get("limit"); x != nil {
		s.Limit, _ = f.integer(x, "extract.limit", step)
	}
	return e
}

func decodeCache(f *fileDec, n *yaml.Node, step string, env *expr.Env) *Cache {
	fs, ok := f.fields(n, "cache", step, "key", "ttl", "staleOnError")
	if !ok {
		return nil
	}
	c := &Cache{Pos: f.pos(n)}
	if x := fs.get("key"); x != nil {
		c.Key = f.templateField(x, "cache.key", step, env)
	} else {
		f.errorf(n, step, "cache needs key")
	}
	if x := fs.get("ttl"); x != nil {
		if d, ok := f.duration(x, "cache.ttl", step); ok {
			c.TTL = d
			if d == 0 {
				f.errorf(x, step, "cache.ttl must be more than 0")
			}
		}
	} else {
		f.errorf(n, step, "cache needs ttl")
	}
	if x := fs.get("staleOnError"); x != nil {
		c.StaleOnError, _ = f.boolean(x, "cache.staleOnError", step)
	}
	return c
}

// splitPipes splits an extract field "selector | pipe | pipe" on the bars that stand alone: a
// bar at the start, or with a space before and after it. A bar inside a word, as in the regex
// of `match (\d+)|(\w+)`, stays part of its pipe. Parts are trimmed; the first is the selector.
func splitPipes(src string) []string {
	var parts []string
	start := 0
	for i := 0; i < len(src); i++ {
		if src[i] != '|' {
			continue
		}
		before := i == 0 || strings.TrimSpace(src[:i]) == "" || src[i-1] == ' ' || src[i-1] == '\t'
		after := i+1 == len(src) || src[i+1] == ' ' || src[i+1] == '\t'
		if before && after {
			parts = append(parts, strings.TrimSpace(src[start:i]))
			start = i + 1
		}
	}
	return append(parts, strings.TrimSpace(src[start:]))
}

// article returns the step kind with "a" or "an": "an if", "an each", "a value".
func article(k StepKind) string {
	switch k {
	case StepIf, StepEach, StepExtract, StepAbility:
		return "an " + k.String()
	}
	return "a " + k.String()
}

// nodeMap is a step's accepted keys; a handful, so a slice beats a map.
type nodeMap []pair

func (m nodeMap) get(key string) *yaml.Node {
	for i := len(m) - 1; i >= 0; i-- {
		if m[i].key == key {
			return m[i].v
		}
	}
	return nil
}
