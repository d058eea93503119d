package client

import (
	"context"
	"errors"
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
