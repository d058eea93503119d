package fnrun

import (
	"encoding/base64"
	"encoding/hex"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
)

// TestFound: the forms of a secret found in a text, and ordinary texts (large ones too) that
// must not raise a false alarm.
func TestFound(t *testing.T) {
	const key = "wk-7Qx9Lm2Vb8Rt4Np6Zc3Hd5Jf"
	ns := []needle{newNeedle("K", key)}
	rev := reverse(key)
	b64 := base64.StdEncoding.EncodeToString([]byte(key))
	for _, c := range []struct {
		name, text string
		want       bool
	}{
		{"as it is", "x" + key + "y", true},
		{"spaced", strings.Join(strings.Split(key, ""), " "), true},
		{"per character JSON", `["` + strings.Join(strings.Split(key, ""), `","`) + `"]`, true},
		{"upper", strings.ToUpper(key), true},
		{"reversed", rev, true},
		{"base64 inside text", "token=abc" + b64 + "&x", true},
		{"base64url of reversed", base64.RawURLEncoding.EncodeToString([]byte(rev)), true},
		{"hex", hex.EncodeToString([]byte(key)), true},
		{"hex of base64", hex.EncodeToString([]byte(b64)), true},
		{"percent-encoded", url.PathEscape(strings.Join(strings.Split(key, ""), "/")), true},
		{"pieces of 4, shuffled", key[16:20] + "|" + key[4:8] + "|" + key[20:24] + "|" + key[8:12] + "|" + key[12:16], true},
		{"one piece of 4", "id " + key[8:12], false},
		{"ordinary text", "The weather in Beijing is 21°C, wind NW 3, humidity 40%.", false},
		{"another key", "wk-1Aa2Bb3Cc4Dd5Ee6Ff7Gg8Hh", false},
	} {
		if got := found(c.text, ns) != ""; got != c.want {
			t.Errorf("%s: found %v, want %v (%q)", c.name, got, c.want, c.text)
		}
	}
	// Large random texts of letters and digits: the piece length grows, so no false alarm.
	rng := rand.New(rand.NewPCG(1, 2))
	const abc = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ,.:"
	for _, n := range []int{1 << 10, 64 << 10, 1 << 20} {
		b := make([]byte, n)
		for i := range b {
			b[i] = abc[rng.IntN(len(abc))]
		}
		if name := found(string(b), ns); name != "" {
			t.Errorf("random text of %d bytes: a false alarm", n)
		}
	}
}
