package stdlib

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/pkuinfo/harness/lang/expr"
)

// registerJSON adds json, toJson, base64 and unbase64 (docs/DECISIONS.md §5).
func registerJSON(env *expr.Env) {
	m := expr.Method()
	env.Register("json", fnJSON, m, expr.Args(1, 1))
	env.Register("toJson", fnToJSON, m, expr.Args(1, 2))
	env.Register("base64", fnBase64, m, expr.Args(1, 1))
	env.Register("unbase64", fnUnbase64, m, expr.Args(1, 1))
}

// fnJSON is json(s): parses JSON text, keeping key order; bad JSON is an error with its line
// and column.
func fnJSON(c *expr.Call, args []any) (any, error) {
	s, err := argString(args, 0)
	if err != nil {
		return nil, err
	}
	if err := c.Charge(kilo(len(s))); err != nil {
		return nil, err
	}
	v, err := expr.DecodeJSON([]byte(strings.TrimPrefix(s, "\ufeff")), c)
	if err != nil {
		if isCharge(err) {
			return nil, err
		}
		// The call already names json: "json: 1:2: …", not "json: json: 1:2: …".
		return nil, errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
	return v, nil
}

// fnToJSON is toJson(v, indent?): JSON text; indent is a number of spaces (0–10) or a string.
func fnToJSON(c *expr.Call, args []any) (any, error) {
	indent := ""
	if len(args) > 1 && args[1] != nil {
		switch x := args[1].(type) {
		case float64:
			n := clampInt(x)
			if n < 0 || n > 10 {
				return nil, fmt.Errorf("indent must be 0 to 10 spaces, got %d", n)
			}
			indent = strings.Repeat(" ", n)
		case string:
			if len(x) > 10 {
				return nil, fmt.Errorf("indent must be at most 10 characters")
			}
			indent = x
		default:
			return nil, fmt.Errorf("argument 2 must be a number or a string, got %s", expr.Describe(args[1]))
		}
	}
	if err := c.Charge(1); err != nil {
		return nil, err
	}
	// Charged as it is written (values visited and bytes), and stopped at expr.MaxText.
	b, err := expr.EncodeJSON(args[0], indent, expr.MaxText, c)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// fnBase64 is base64(s): standard base64 (with padding) of s's UTF-8 bytes.
func fnBase64(c *expr.Call, args []any) (any, error) {
	s, err := argString(args, 0)
	if err != nil {
		return nil, err
	}
	if err := c.Charge(kilo(len(s))); err != nil {
		return nil, err
	}
	return base64.StdEncoding.EncodeToString([]byte(s)), nil
}

// fnUnbase64 is unbase64(s): decodes standard or URL-safe base64, padded or not; the bytes must
// be UTF-8 text.
func fnUnbase64(c *expr.Call, args []any) (any, error) {
	s, err := argString(args, 0)
	if err != nil {
		return nil, err
	}
	if err := c.Charge(kilo(len(s))); err != nil {
		return nil, err
	}
	s = strings.TrimSpace(s)
	enc := base64.StdEncoding
	if strings.ContainsAny(s, "-_") {
		enc = base64.URLEncoding
	}
	b, err := enc.WithPadding(base64.NoPadding).DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return nil, fmt.Errorf("invalid base64: %v", err)
	}
	if !utf8.Valid(b) {
		return nil, fmt.Errorf("the decoded bytes are not UTF-8 text")
	}
	return string(b), nil
}
