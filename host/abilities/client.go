package abilities

import (
	"context"
	"fmt"
	"strings"
)

// The client-mediated abilities: the host has no screen, so it answers
// with { status: 'needs_input', fields, message } (seed 004 "Results").
// The tool returns that as its result; the client asks the user and calls
// the tool again with the fields filled in its input.

// smsAwaitCode is sms.awaitCode (read). Result: { status: 'needs_input',
// fields: [{ name: 'code', type: 'string', source: 'sms', pattern:
// '^\d{4,8}$' }], message }.
func (s *Set) smsAwaitCode(_ context.Context, c *call) (any, error) {
	if err := c.args.only("message", "field"); err != nil {
		return nil, err
	}
	msg, err := c.args.str("message", false, 200)
	if err != nil {
		return nil, err
	}
	if msg == "" {
		msg = "请填入短信验证码 / Enter the code from the SMS"
	}
	field, err := c.args.str("field", false, 40)
	if err != nil {
		return nil, err
	}
	if field == "" {
		field = "code"
	}
	return obj("status", "needs_input",
		"fields", []any{obj("name", field, "type", "string", "source", "sms", "pattern", `^\d{4,8}$`)},
		"message", msg), nil
}

// filesPick is files.pick { types?, multiple? } (read). types are MIME
// types or extensions (".pdf", "image/*"), at most 20. Result: {
// status: 'needs_input', fields: [{ name: 'files', type: 'array', source:
// 'files', types, multiple }], message }; the client puts the picked files
// in input.files as [{ name, type, size, text? }].
func (s *Set) filesPick(_ context.Context, c *call) (any, error) {
	if err := c.args.only("types", "multiple", "message"); err != nil {
		return nil, err
	}
	var types []any
	if v := c.args.get("types"); v != nil {
		list, ok := v.([]any)
		if !ok || len(list) > 20 {
			return nil, fmt.Errorf("types must be a list of at most 20 MIME types or extensions")
		}
		for i, t := range list {
			ts, ok := t.(string)
			if !ok || ts == "" || len(ts) > 100 || !(strings.HasPrefix(ts, ".") || strings.Contains(ts, "/")) {
				return nil, fmt.Errorf("types[%d]: want a MIME type such as image/* or an extension such as .pdf", i)
			}
			types = append(types, ts)
		}
	}
	if types == nil {
		types = []any{}
	}
	multiple, err := c.args.boolean("multiple", false)
	if err != nil {
		return nil, err
	}
	msg, err := c.args.str("message", false, 200)
	if err != nil {
		return nil, err
	}
	if msg == "" {
		msg = "请选择文件 / Pick a file"
		if multiple {
			msg = "请选择文件 / Pick files"
		}
	}
	return obj("status", "needs_input",
		"fields", []any{obj("name", "files", "type", "array", "source", "files", "types", types, "multiple", multiple)},
		"message", msg), nil
}

func errTooLong(what string, n, max int) error {
	return fmt.Errorf("%s: %d bytes, the limit is %d", what, n, max)
}
