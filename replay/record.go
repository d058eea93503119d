package replay

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/lang/expr"
	"go.yaml.in/yaml/v3"
)

// Recorder is an http.RoundTripper that sends each request through Next and keeps the reply,
// so that a live run (`harness plugin run --record`) can be saved as a recorded test with
// EncodeTest. It reads at most interp.MaxResponse+1 bytes of a body (the interpreter refuses
// longer replies anyway). Safe for concurrent use.
type Recorder struct {
	Next http.RoundTripper // the real transport

	mu        sync.Mutex
	exchanges []Exchange
}

// Exchange is one request a Recorder saw and the reply it got.
type Exchange struct {
	Method string      // "GET", "POST", …
	URL    string      // the absolute URL
	Status int         // the reply's status code
	Header http.Header // the reply's headers
	Body   []byte      // the reply's body
}

// RoundTrip implements http.RoundTripper.
func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.Next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, interp.MaxResponse+1))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	r.mu.Lock()
	r.exchanges = append(r.exchanges, Exchange{Method: method, URL: req.URL.String(), Status: resp.StatusCode, Header: resp.Header.Clone(), Body: body})
	r.mu.Unlock()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	return resp, nil
}

// Exchanges returns what was recorded, in the order the replies arrived.
func (r *Recorder) Exchanges() []Exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Exchange(nil), r.exchanges...)
}

// RecordedTest is a live run to be written as a test document (docs/DECISIONS.md §8).
type RecordedTest struct {
	Name      string     // the test's name
	Tool      string     // the tool that ran
	Input     any        // its input (an expr value)
	Now       time.Time  // the run's clock
	Exchanges []Exchange // the replies, in order
	Result    any        // the result, when Err is nil
	Err       error      // the run's error
}

// maxInlineBody is the largest text body EncodeTest writes inline; longer ones, and bodies that
// are not UTF-8 text, go to a side file.
const maxInlineBody = 64 << 10

// EncodeTest writes t as one YAML test document: tool, input, now, one response per exchange
// (match is the URL; method when not GET; status when not 200; the content-type and location
// headers; the body inline when it is UTF-8 text of at most 64 KB, else in a side file written by
// sideFile(index, extension, data), which returns the path to put in `file:`), and expect (the
// result) or expectError (the error message, anchored and quoted). A person should then trim
// the bodies to what the tool needs.
func EncodeTest(t RecordedTest, sideFile func(index int, ext string, data []byte) (string, error)) ([]byte, error) {
	doc := mapping()
	if t.Name != "" {
		doc.add("name", str(t.Name))
	}
	doc.add("tool", str(t.Tool))
	in, err := node(t.Input)
	if err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	doc.add("input", in)
	doc.add("now", str(t.Now.In(beijing).Format(time.RFC3339)))
	if len(t.Exchanges) > 0 {
		list := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for i, x := range t.Exchanges {
			r := mapping()
			r.add("match", str(x.URL))
			if x.Method != http.MethodGet {
				r.add("method", str(x.Method))
			}
			if x.Status != http.StatusOK {
				r.add("status", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: fmt.Sprint(x.Status)})
			}
			h := mapping()
			for _, k := range []string{"Content-Type", "Location"} {
				if v := x.Header.Get(k); v != "" {
					h.add(strings.ToLower(k), str(v))
				}
			}
			if len(h.Content) > 0 {
				h.Style = yaml.FlowStyle
				r.add("headers", h.Node)
			}
			switch {
			case len(x.Body) == 0:
			case utf8.Valid(x.Body) && len(x.Body) <= maxInlineBody && !bytes.ContainsRune(x.Body, 0):
				r.add("body", str(string(x.Body)))
			case sideFile == nil:
				return nil, fmt.Errorf("response %d: the body is not short UTF-8 text and there is no side file", i+1)
			default:
				rel, err := sideFile(i+1, extension(x.Header.Get("Content-Type")), x.Body)
				if err != nil {
					return nil, err
				}
				r.add("file", str(rel))
			}
			list.Content = append(list.Content, r.Node)
		}
		doc.add("responses", list)
	}
	if t.Err != nil {
		msg := t.Err.Error()
		if ie, ok := t.Err.(*interp.Error); ok {
			msg = ie.Msg
		}
		doc.add("expectError", str("^"+regexp.QuoteMeta(msg)+"$"))
	} else {
		res, err := node(t.Result)
		if err != nil {
			return nil, fmt.Errorf("result: %w", err)
		}
		doc.add("expect", res)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc.Node); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// extension names a side file by the reply's content type: ".html", ".json", ".txt" or ".bin".
func extension(contentType string) string {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch {
	case strings.Contains(mt, "html"):
		return ".html"
	case strings.Contains(mt, "json"):
		return ".json"
	case strings.HasPrefix(mt, "text/"), strings.Contains(mt, "xml"):
		return ".txt"
	}
	return ".bin"
}

type mapNode struct{ *yaml.Node }

func mapping() mapNode { return mapNode{&yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}} }

func (m mapNode) add(key string, v *yaml.Node) {
	m.Content = append(m.Content, str(key), v)
}

func str(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	if strings.Contains(s, "\n") {
		n.Style = yaml.LiteralStyle
	}
	return n
}

// node converts an expr value to a YAML node that Decode reads back as the same value.
func node(v any) (*yaml.Node, error) {
	switch x := v.(type) {
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(x)}, nil
	case float64:
		switch {
		case math.IsNaN(x):
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: ".nan"}, nil
		case math.IsInf(x, 1):
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: ".inf"}, nil
		case math.IsInf(x, -1):
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: "-.inf"}, nil
		}
		s := expr.FormatNumber(x)
		tag := "!!float"
		if x == math.Trunc(x) && math.Abs(x) <= 1<<53 {
			tag = "!!int"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: s}, nil
	case string:
		return str(x), nil
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, e := range x {
			c, err := node(e)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, c)
		}
		return n, nil
	case *expr.Object:
		m := mapping()
		for _, k := range x.Keys() {
			e, _ := x.Get(k)
			c, err := node(e)
			if err != nil {
				return nil, err
			}
			m.add(k, c)
		}
		return m.Node, nil
	}
	return nil, fmt.Errorf("%s cannot be written to a test", expr.Describe(v))
}
