package fnrun_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/cloud/protocol"
	"github.com/pkuinfo/harness/cloud/server"
	"github.com/pkuinfo/harness/cloud/server/fnrun"
)

// TestKVSetCountsAgainstTheDeviceQuota: a function's kv.set is charged to the calling device
// like its own store: past the device's plugins or bytes it is refused with `quota`, and the
// device's other namespaces are untouched.
func TestKVSetCountsAgainstTheDeviceQuota(t *testing.T) {
	fl := files{"PLUGIN.md": doc, "tools/t.yaml": toolFile}
	hash := docHash(t, fl)
	for _, tc := range []struct {
		name  string
		limit server.DeviceStoreLimits
		fill  int // bytes already stored by the device under another plugin
		want  string
	}{
		{"within the quota", server.DeviceStoreLimits{MaxBytes: 4_000_000, MaxPlugins: 16}, 100, ""},
		{"past the device's plugins", server.DeviceStoreLimits{MaxBytes: 4_000_000, MaxPlugins: 1}, 100, "1 plugins per device"},
		{"past the device's bytes", server.DeviceStoreLimits{MaxBytes: 1000, MaxPlugins: 16}, 997, "1000 bytes per device"},
		{"no limit given: the default", server.DeviceStoreLimits{}, 100, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := server.NewMemory()
			ctx := context.Background()
			big := server.StoreQuota{StoreLimits: protocol.StoreLimits{MaxBytes: 1 << 20, MaxKeys: 10, MaxValueBytes: 1 << 20}}
			val, _ := json.Marshal(strings.Repeat("x", tc.fill-len("k")-2))
			if _, err := st.StorePut(ctx, server.Namespace{Device: "dev1", Plugin: "other"}, server.StoreItem{Key: "k", Value: val}, nil, big, 1); err != nil {
				t.Fatal(err)
			}
			r, err := fnrun.New(fnrun.Config{Policy: fnrun.PolicyOpen, Fetcher: fl, Storage: st, Transport: &upstream{},
				Allow: []protocol.DocumentRef{{Link: link, Hash: hash}},
				Secrets: []fnrun.SecretBinding{{Plugin: "fndemo", Name: "API_KEY", Link: link,
					Uses: []fnrun.SecretUse{{Host: "api.example.org", Header: "Authorization"}}, Value: "s3cr3t-value-42"}}})
			if err != nil {
				t.Fatal(err)
			}
			_, err = r.Call(ctx, server.FunctionCall{Plugin: "fndemo", Name: "hello", Doc: protocol.DocumentRef{Link: link, Hash: hash},
				Caller: "c1", Device: "dev1", Input: json.RawMessage(`{"name":"a"}`), DeviceStore: tc.limit})
			var pe *protocol.Error
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("call: %v", err)
			case tc.want != "" && (!errors.As(err, &pe) || pe.Code != protocol.CodeQuota || !strings.Contains(pe.Message, tc.want)):
				t.Fatalf("call = %v, want quota %q", err, tc.want)
			}
			if _, err := st.StoreGet(ctx, server.Namespace{Device: "dev1", Plugin: "other"}, "k", 2); err != nil {
				t.Errorf("the device's own value: %v", err)
			}
		})
	}
}
