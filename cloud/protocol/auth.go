package protocol

import (
	"crypto/ed25519"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// TokenTTLms is a plugin token's lifetime: 10 minutes, in milliseconds.
const TokenTTLms = 10 * 60 * 1000

// AuthSkewMs is how far an auth request's ts may be from the server's clock: 5 minutes, in
// milliseconds (|now − ts| ≤ 300,000 is accepted).
const AuthSkewMs = 5 * 60 * 1000

// NormalizeServices deduplicates and sorts services, as the auth challenge requires. The input
// is not changed.
func NormalizeServices(services []string) []string {
	out := slices.Clone(services)
	slices.Sort(out)
	return slices.Compact(out)
}

// AuthChallenge is the signed bytes of seed 003 “POST /v1/auth/token”: five lines joined by
// "\n" without a trailing newline —
//
//	pku-harness-cloud/v1/auth
//	aud (the provider origin)
//	services, deduplicated, sorted, joined by ","
//	ts, Unix ms in decimal
//	nonce (16 random bytes, base64url)
func AuthChallenge(aud string, services []string, ts int64, nonce string) []byte {
	var b strings.Builder
	b.WriteString(AuthLabel)
	b.WriteByte('\n')
	b.WriteString(aud)
	b.WriteByte('\n')
	b.WriteString(strings.Join(NormalizeServices(services), ","))
	b.WriteByte('\n')
	b.WriteString(strconv.FormatInt(ts, 10))
	b.WriteByte('\n')
	b.WriteString(nonce)
	return []byte(b.String())
}

// SignAuthChallenge signs req's challenge with the device's Ed25519 key and stores the
// signature in req.Sig. The other fields must already be set.
func SignAuthChallenge(priv ed25519.PrivateKey, req *AuthTokenRequest) {
	sig := ed25519.Sign(priv, AuthChallenge(req.Aud, req.Services, req.Ts, req.Nonce))
	req.Sig = B64.EncodeToString(sig)
}

// VerifyAuthChallenge checks req.Sig against signPub (a Key32 string). It checks the signature
// only: the caller compares aud, ts and the nonce with its own state.
func VerifyAuthChallenge(signPub string, req *AuthTokenRequest) error {
	pub, err := DecodeKey32(signPub)
	if err != nil {
		return fmt.Errorf("auth: signPub: %w", err)
	}
	sig, err := B64.DecodeString(req.Sig)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return fmt.Errorf("auth: sig is not a 64-byte base64url signature")
	}
	if !ed25519.Verify(pub, AuthChallenge(req.Aud, req.Services, req.Ts, req.Nonce), sig) {
		return fmt.Errorf("auth: bad signature")
	}
	return nil
}

// Origin reduces a base URL to the provider origin used as `aud`: lowercase
// scheme://host[:port], no path, default ports dropped.
func Origin(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("origin: %w", err)
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", fmt.Errorf("origin: %q: scheme must be http or https", base)
	}
	if u.Host == "" {
		return "", fmt.Errorf("origin: %q has no host", base)
	}
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if scheme == "http" && port == "80" || scheme == "https" && port == "443" {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host, nil
}
