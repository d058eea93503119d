package registry

import (
	"context"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/examples/demo-canteen/canteen"
	"github.com/pkuinfo/harness/lang/diag"
	"github.com/pkuinfo/harness/mcpx"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// demoName asks a real MCP server (the demo canteen over loopback) for
// its name, as `harness registry validate --remote` does.
func demoName(t *testing.T) (string, func(string, bool) (string, error)) {
	mux := http.NewServeMux()
	mux.Handle("/mcp", canteen.Handler(canteen.DemoToken))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp", func(endpoint string, bearer bool) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c := &mcpx.RemoteClient{URL: endpoint}
		if bearer {
			c.Token = canteen.DemoToken
		}
		s, err := c.Describe(ctx)
		if err != nil {
			return "", err
		}
		return s.Name, nil
	}
}

// TestValidateFixtures checks each testdata/*.json against its golden
// diagnostics: a valid registry, a duplicate id (and icon), a remote
// entry whose MCP server has another name, missing and incomplete
// disclosures, and bad fields of every kind.
func TestValidateFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) < 5 {
		t.Fatalf("fixtures: %v %v", files, err)
	}
	endpoint, name := demoName(t)
	for _, file := range files {
		base := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(base, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			o := Options{Builtins: []string{"focus", "todos", "timetable", "schedule", "authenticator"}}
			if base == "remote_mismatch" {
				data = []byte(strings.ReplaceAll(string(data), "ENDPOINT", endpoint))
				o.RemoteName = name
			}
			entries, diags := Validate(base+".json", data, o)
			var b strings.Builder
			for _, d := range diags {
				b.WriteString(strings.ReplaceAll(d.String(), endpoint, "ENDPOINT") + "\n")
			}
			got := b.String()
			golden := strings.TrimSuffix(file, ".json") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if got != string(want) {
				t.Errorf("diagnostics differ\n--- got\n%s--- want\n%s", got, want)
			}
			if base == "valid" && (len(diags) != 0 || len(entries) != 4) {
				t.Errorf("valid.json: %d entries, %d diagnostics", len(entries), len(diags))
			}
		})
	}
}

func TestValidateMalformed(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{``, "r.json:1:1: $: the file is empty"},
		{`{"plugins": 3}`, "array"},
		{`{"plugins": [], "extra": 1}`, `unknown top-level field "extra"`},
		{`{"other": []}`, `without "plugins"`},
		{"[\n  {\"id\": }\n]", "r.json:2:"},
		{`[1]`, "cannot unmarshal number"},
		{`[] []`, "text after the array"},
		{"\xff", "not UTF-8"},
		// A cut-off file is reported where it ends, not at 1:1.
		{"[\n  {\"id\": \"a\"", "r.json:2:13: $: the file ends before the JSON does"},
		{`{"plugins": [`, "r.json:1:14: $: the file ends before the JSON does"},
	} {
		_, diags := Validate("r.json", []byte(tc.src), Options{})
		if len(diags) == 0 || !strings.Contains(diags[0].String(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.src, diags, tc.want)
		}
	}
}

func FuzzValidate(f *testing.F) {
	for _, name := range []string{"valid", "duplicate_id", "missing_disclosure", "bad_fields"} {
		b, err := os.ReadFile(filepath.Join("testdata", name+".json"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`[{"id":"a"`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, diags := Validate("r.json", data, Options{Builtins: []string{"focus"}})
		for _, d := range diags {
			if d.Pos.Line < 1 || d.Pos.Col < 1 || d.Msg == "" {
				t.Fatalf("bad diagnostic %+v", d)
			}
		}
	})
}

// A registry entry is for every student: an endpoint on the author's own
// machine (loopback or a private address) would make each student's app
// call a server on their own device or network. It is flagged.
func TestValidateLocalEndpoint(t *testing.T) {
	entry := func(endpoint string) []byte {
		return []byte(`[{"id":"my-plugin","name":"我的插件","description":"一句话说明它做什么。","author":"someone",
"source":"https://github.com/someone/my-plugin","kind":"remote","endpoint":"` + endpoint + `","auth":"none",
"requires":["network"],"scopes":[],"tags":[]}]`)
	}
	for _, tc := range []struct{ endpoint, want string }{
		{"https://my-plugin.example.com/mcp", ""},
		{"http://127.0.0.1:8080/mcp", "reaches each student’s own machine"},
		{"http://localhost/mcp", "reaches each student’s own machine"},
		{"https://192.168.1.10/mcp", "reaches each student’s own machine"},
		{"https://[::1]/mcp", "reaches each student’s own machine"},
	} {
		_, diags := Validate("r.json", entry(tc.endpoint), Options{})
		var got []string
		for _, d := range diags {
			got = append(got, d.String())
		}
		if tc.want == "" && len(diags) != 0 || tc.want != "" && (len(diags) != 1 || !strings.Contains(got[0], tc.want) || diags[0].Severity != diag.Warning) {
			t.Errorf("%s: %q, want one warning with %q", tc.endpoint, got, tc.want)
		}
	}
}
