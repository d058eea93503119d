package client

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"syscall"
	"testing"
)

// A failed dial must not print the viewer's peer token: net/http quotes the whole URL, `?t=`
// included, and disconnect errors reach events and logs.
func TestDialErrorHidesToken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: connection refused
	const tok = "pk1.SECRETSECRETSECRETSECRET"
	_, err = dialWS(context.Background(), nil, "ws://"+addr+"/v1/c/AAAAAAAAAAAAAAAAAAAAAA/ws?t="+tok, nil)
	if err == nil {
		t.Fatal("dial succeeded")
	}
	want := `cloud channel: dial: failed to WebSocket dial: failed to send handshake request: Get "http://` + addr + `/v1/c/AAAAAAAAAAAAAAAAAAAAAA/ws?[redacted]": dial tcp ` + addr + `: connect: connection refused`
	if err.Error() != want {
		t.Errorf("error:\n%s\nwant\n%s", err, want)
	}
	if strings.Contains(err.Error(), "SECRET") {
		t.Errorf("the token leaks: %v", err)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("the cause is lost: %v", err)
	}
}

// TestIdentityNeverPrints: a device identity printed by any fmt verb (as a value or a pointer),
// encoded as JSON or logged by either slog handler shows the device id only, never a private
// key or the store secret.
func TestIdentityNeverPrints(t *testing.T) {
	id, err := NewIdentity()
	if err != nil {
		t.Fatal(err)
	}
	id.DeviceID = "dev_visible"
	seed := id.Sign.Seed()
	secrets := map[string][]byte{"sign seed": seed, "sign key": id.Sign, "box key": id.Box.Bytes(), "store secret": id.StoreSecret[:]}
	var outs []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T"} {
		outs = append(outs, fmt.Sprintf(verb, id), fmt.Sprintf(verb, *id))
	}
	for _, v := range []any{id, *id, struct{ ID *Identity }{id}, []Identity{*id}} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, string(b))
	}
	var logs bytes.Buffer
	for _, h := range []slog.Handler{slog.NewJSONHandler(&logs, nil), slog.NewTextHandler(&logs, nil)} {
		slog.New(h).Info("identity", "id", id, "value", *id)
	}
	outs = append(outs, logs.String())
	for _, out := range outs {
		for what, b := range secrets {
			for _, enc := range []string{base64.StdEncoding.EncodeToString(b), base64.RawURLEncoding.EncodeToString(b), hex.EncodeToString(b), strings.ToUpper(hex.EncodeToString(b)), fmt.Sprint(b), fmt.Sprint([]byte(b))} {
				if strings.Contains(out, strings.Trim(enc, "[]")) {
					t.Fatalf("the %s shows in %q", what, out)
				}
			}
		}
		if !strings.Contains(out, "dev_visible") && !strings.Contains(out, "client.Identity") {
			t.Errorf("%q does not name the device", out)
		}
	}
}
