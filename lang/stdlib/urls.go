package stdlib

import (
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/pkuinfo/harness/lang/expr"
)

// registerURLs adds url, parseUrl, queryString, encode and decode (docs/DECISIONS.md §5, §10).
func registerURLs(env *expr.Env) {
	m := expr.Method()
	env.Register("url", fnURL, expr.Args(1, 3))
	env.Register("parseUrl", fnParseURL, m, expr.Args(1, 1))
	env.Register("queryString", fnQueryString, m, expr.Args(1, 1))
	env.Register("encode", fnEncode, m, expr.Args(1, 1))
	env.Register("decode", fnDecode, m, expr.Args(1, 1))
}

// EncodeURIComponent escapes s as JavaScript's encodeURIComponent: everything but
// A–Z a–z 0–9 - _ . ! ~ * ' ( ) is percent-encoded as UTF-8 (a space is %20).
func EncodeURIComponent(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_.!~*'()", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// QueryString encodes an object as a query (docs/DECISIONS.md §10): keys in the object's order,
// values as text and encodeURIComponent-encoded; a list value repeats the key; null values are
// left out.
func QueryString(o *expr.Object) (string, error) {
	var b strings.Builder
	add := func(k string, v any) error {
		if v == nil {
			return nil
		}
		s, err := expr.ToText(v)
		if err != nil {
			return fmt.Errorf("query %s: %v", k, err)
		}
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(EncodeURIComponent(k))
		b.WriteByte('=')
		b.WriteString(EncodeURIComponent(s))
		return nil
	}
	for i := 0; i < o.Len(); i++ {
		k, v := o.Entry(i)
		if l, ok := v.([]any); ok {
			for _, e := range l {
				if err := add(k, e); err != nil {
					return "", err
				}
			}
			continue
		}
		if err := add(k, v); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

func fnQueryString(c *expr.Call, args []any) (any, error) {
	o, err := argObject(args, 0)
	if err != nil {
		return nil, err
	}
	if err := c.Charge(o.Len()); err != nil {
		return nil, err
	}
	return QueryString(o)
}

// fnURL is url(base, ref?, query?): ref resolved against base as a browser does, then the query
// object appended (after any query already there).
func fnURL(c *expr.Call, args []any) (any, error) {
	base, err := argString(args, 0)
	if err != nil {
		return nil, err
	}
	if err := c.Charge(kilo(len(base))); err != nil {
		return nil, err
	}
	u, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("bad base URL %q: %v", base, unwrapURLErr(err))
	}
	if len(args) > 1 && args[1] != nil {
		ref, err := argString(args, 1)
		if err != nil {
			return nil, err
		}
		r, err := url.Parse(ref)
		if err != nil {
			return nil, fmt.Errorf("bad URL %q: %v", ref, unwrapURLErr(err))
		}
		u = u.ResolveReference(r)
		u.Fragment, u.RawFragment = r.Fragment, r.RawFragment // RFC 3986 §5.2.2: the reference's fragment
	}
	s := u.String()
	if len(args) > 2 && args[2] != nil {
		q, err := argObject(args, 2)
		if err != nil {
			return nil, err
		}
		if err := c.Charge(q.Len()); err != nil {
			return nil, err
		}
		qs, err := QueryString(q)
		if err != nil {
			return nil, err
		}
		if qs != "" {
			frag := ""
			if i := strings.IndexByte(s, '#'); i >= 0 {
				s, frag = s[:i], s[i:]
			}
			switch {
			case !strings.Contains(s, "?"):
				s += "?" + qs
			case strings.HasSuffix(s, "?") || strings.HasSuffix(s, "&"):
				s += qs
			default:
				s += "&" + qs
			}
			s += frag
		}
	}
	return s, nil
}

func unwrapURLErr(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// fnParseURL is parseUrl(s) → { scheme, host, path, query }: query is an object in the URL's
// order, a repeated key giving a list of its values.
func fnParseURL(c *expr.Call, args []any) (any, error) {
	s, err := argString(args, 0)
	if err != nil {
		return nil, err
	}
	if err := c.Charge(kilo(len(s))); err != nil {
		return nil, err
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("bad URL %q: %v", s, unwrapURLErr(err))
	}
	q := expr.NewObject(4)
	if u.RawQuery != "" {
		for _, part := range strings.Split(u.RawQuery, "&") {
			if part == "" {
				continue
			}
			k, v, _ := strings.Cut(part, "=")
			k, v = queryUnescape(k), queryUnescape(v)
			if old, ok := q.Get(k); ok {
				if l, isList := old.([]any); isList {
					q.Set(k, append(l[:len(l):len(l)], v))
				} else {
					q.Set(k, []any{old, v})
				}
				continue
			}
			q.Set(k, v)
		}
	}
	o := expr.NewObject(4)
	o.Set("scheme", u.Scheme)
	o.Set("host", u.Host)
	path := u.Path
	if u.Opaque != "" {
		path = u.Opaque
	}
	o.Set("path", path)
	o.Set("query", q)
	return o, nil
}

func queryUnescape(s string) string {
	if r, err := url.QueryUnescape(s); err == nil {
		return r
	}
	return s
}

// fnEncode is encode(s): encodeURIComponent.
func fnEncode(c *expr.Call, args []any) (any, error) {
	s, err := expr.ToText(args[0])
	if err != nil {
		return nil, err
	}
	if err := c.Charge(kilo(len(s))); err != nil {
		return nil, err
	}
	return EncodeURIComponent(s), nil
}

// fnDecode is decode(s): decodeURIComponent; a malformed escape is an error.
func fnDecode(c *expr.Call, args []any) (any, error) {
	s, err := argString(args, 0)
	if err != nil {
		return nil, err
	}
	if err := c.Charge(kilo(len(s))); err != nil {
		return nil, err
	}
	r, err := url.PathUnescape(s)
	if err != nil || !utf8.ValidString(r) {
		return nil, fmt.Errorf("malformed percent-encoding in %q", s)
	}
	return r, nil
}
