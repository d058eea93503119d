package protocol

import (
	"strings"
	"unicode/utf8"
)

// Checkers for the seed's string patterns, written out by hand (no regexp) because the server
// runs some of them for every relayed frame.

func isB64URLChar(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

func isB64URL(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isB64URLChar(s[i]) {
			return false
		}
	}
	return true
}

func b64Len(s string, min, max int) bool {
	return len(s) >= min && len(s) <= max && isB64URL(s)
}

// ValidKey32 reports whether s matches Key32 `^[A-Za-z0-9_-]{43}$` (32 bytes, base64url).
func ValidKey32(s string) bool { return len(s) == 43 && isB64URL(s) && canonicalB64(s) }

// ValidNonce24 reports whether s matches Nonce24 `^[A-Za-z0-9_-]{32}$`.
func ValidNonce24(s string) bool { return len(s) == 32 && isB64URL(s) }

// ValidNonce16 reports whether s matches Nonce16 `^[A-Za-z0-9_-]{22}$`.
func ValidNonce16(s string) bool { return len(s) == 22 && isB64URL(s) && canonicalB64(s) }

// ValidSig64 reports whether s matches Sig64 `^[A-Za-z0-9_-]{86}$`.
func ValidSig64(s string) bool { return len(s) == 86 && isB64URL(s) && canonicalB64(s) }

// ValidID reports whether s matches ChannelId and DeviceId `^[A-Za-z0-9_-]{8,64}$`.
func ValidID(s string) bool { return b64Len(s, 8, 64) }

// ValidPeerID reports whether s matches PeerId `^[A-Za-z0-9_-]{4,64}$`.
func ValidPeerID(s string) bool { return b64Len(s, 4, 64) }

// ValidSalt reports whether s matches the PoW salt `^[A-Za-z0-9_-]{1,64}$`.
func ValidSalt(s string) bool { return b64Len(s, 1, 64) }

// ValidPluginID reports whether s matches PluginId `^[a-z0-9][a-z0-9-]{1,63}$`.
func ValidPluginID(s string) bool { return lowerID(s, 64) }

// ValidPageName reports whether s matches PageName `^[a-z0-9][a-z0-9-]{0,40}$`.
func ValidPageName(s string) bool { return len(s) >= 1 && lowerID(s, 41) }

func lowerID(s string, max int) bool {
	if len(s) > max || len(s) == 0 {
		return false
	}
	if max == 64 && len(s) < 2 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' && i > 0 {
			continue
		}
		return false
	}
	return true
}

// ValidFunctionName reports whether s matches FunctionName `^[a-zA-Z][a-zA-Z0-9_]{0,63}$`.
func ValidFunctionName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && (c >= '0' && c <= '9' || c == '_') {
			continue
		}
		return false
	}
	return true
}

// ValidMailboxSlot reports whether s matches MailboxSlot `^[A-Za-z0-9._:-]{1,64}$`.
func ValidMailboxSlot(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isB64URLChar(c) && c != '.' && c != ':' {
			return false
		}
	}
	return true
}

// MaxStoreKeyLen is the longest StoreKey, in bytes.
const MaxStoreKeyLen = 256

// CheckStoreKey checks a decoded store key against StoreKey `^[A-Za-z0-9._:/-]{1,256}$` with
// no `.` or `..` segment and no empty segment (so no leading, trailing or doubled `/`). The
// error says what is wrong.
func CheckStoreKey(key string) error {
	if key == "" {
		return fieldErr("key", "must not be empty")
	}
	if len(key) > MaxStoreKeyLen {
		return fieldErr("key", "is %d bytes, the limit is %d", len(key), MaxStoreKeyLen)
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !isB64URLChar(c) && c != '.' && c != ':' && c != '/' {
			// Name the character, not its first byte ('键', not 'é'); a byte that starts no
			// UTF-8 character is shown in hex.
			if r, size := utf8.DecodeRuneInString(key[i:]); r != utf8.RuneError || size > 1 {
				return fieldErr("key", "character %q at byte %d is not allowed (A-Z a-z 0-9 . _ : / -)", r, i)
			}
			return fieldErr("key", "byte 0x%02X at byte %d is not allowed (A-Z a-z 0-9 . _ : / -)", c, i)
		}
	}
	for seg := range strings.SplitSeq(key, "/") {
		switch seg {
		case "":
			return fieldErr("key", "has an empty segment")
		case ".", "..":
			return fieldErr("key", "has a %q segment", seg)
		}
	}
	return nil
}

// ValidStorePrefix reports whether s may be a list prefix: empty, or characters of StoreKey and
// at most 256 bytes. A prefix may end in `/` or be a partial segment.
func ValidStorePrefix(s string) bool {
	if len(s) > MaxStoreKeyLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isB64URLChar(c) && c != '.' && c != ':' && c != '/' {
			return false
		}
	}
	return true
}

// canonicalB64 reports whether the unused low bits of the last base64url character are zero,
// so each byte string has exactly one spelling (a key may not be registered twice under two
// spellings).
func canonicalB64(s string) bool {
	rem := len(s) % 4
	if rem == 0 {
		return true
	}
	v := b64Value(s[len(s)-1])
	switch rem {
	case 2: // 1 byte: 4 unused bits
		return v&0x0f == 0
	case 3: // 2 bytes: 2 unused bits
		return v&0x03 == 0
	}
	return false
}

func b64Value(c byte) byte {
	switch {
	case c >= 'A' && c <= 'Z':
		return c - 'A'
	case c >= 'a' && c <= 'z':
		return c - 'a' + 26
	case c >= '0' && c <= '9':
		return c - '0' + 52
	case c == '-':
		return 62
	}
	return 63
}
