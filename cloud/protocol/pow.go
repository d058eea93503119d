package protocol

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/bits"
	"strconv"
)

// Proof-of-work bounds (seed 003 “POST /v1/devices”).
const (
	// MaxPowDifficulty is the highest difficulty a client accepts (MAX_POW_DIFFICULTY).
	MaxPowDifficulty = 28
	// DefaultPowDifficulty is the reference server's default difficulty (about one second on a
	// phone).
	DefaultPowDifficulty = 16
	// maxPowNonce is the largest nonce the pattern `^(0|[1-9][0-9]{0,14})$` allows.
	maxPowNonce = 999_999_999_999_999
)

// PowPrefix is UTF-8("pku-harness-cloud/v1/pow\n" + salt + "\n" + signPub + "\n" + boxPub +
// "\n"): the bytes hashed in front of the decimal nonce. Binding both public keys means one
// solution registers exactly one identity.
func PowPrefix(salt, signPub, boxPub string) []byte {
	b := make([]byte, 0, len(PowLabel)+len(salt)+len(signPub)+len(boxPub)+4+16)
	b = append(b, PowLabel...)
	b = append(b, '\n')
	b = append(b, salt...)
	b = append(b, '\n')
	b = append(b, signPub...)
	b = append(b, '\n')
	b = append(b, boxPub...)
	return append(b, '\n')
}

// LeadingZeroBits counts the zero bits at the start of sum, most significant bit first.
func LeadingZeroBits(sum []byte) int {
	n := 0
	for _, b := range sum {
		if b != 0 {
			return n + bits.LeadingZeros8(b)
		}
		n += 8
	}
	return n
}

// ValidPowNonce reports whether s matches `^(0|[1-9][0-9]{0,14})$`.
func ValidPowNonce(s string) bool {
	if len(s) == 0 || len(s) > 15 || len(s) > 1 && s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// VerifyPow reports whether SHA-256(PowPrefix(salt, signPub, boxPub) ‖ nonce) starts with at
// least difficulty zero bits, nonce being a decimal string of the seed's pattern.
func VerifyPow(salt, signPub, boxPub, nonce string, difficulty int) bool {
	if !ValidPowNonce(nonce) || difficulty < 0 || difficulty > 256 {
		return false
	}
	b := append(PowPrefix(salt, signPub, boxPub), nonce...)
	sum := sha256.Sum256(b)
	return LeadingZeroBits(sum[:]) >= difficulty
}

// SolvePow finds the smallest decimal nonce that VerifyPow accepts. It refuses a difficulty
// above MaxPowDifficulty (a server may not make a phone work for hours) or below 0, and stops
// with ctx's error when ctx ends.
func SolvePow(ctx context.Context, salt, signPub, boxPub string, difficulty int) (string, error) {
	if difficulty < 0 || difficulty > MaxPowDifficulty {
		return "", fmt.Errorf("pow: difficulty %d is outside 0–%d", difficulty, MaxPowDifficulty)
	}
	prefix := PowPrefix(salt, signPub, boxPub)
	n := len(prefix)
	buf := prefix
	for nonce := uint64(0); nonce <= maxPowNonce; nonce++ {
		if nonce&0xffff == 0 {
			if err := ctx.Err(); err != nil {
				return "", fmt.Errorf("pow: %w", err)
			}
		}
		buf = strconv.AppendUint(buf[:n], nonce, 10)
		sum := sha256.Sum256(buf)
		if LeadingZeroBits(sum[:]) >= difficulty {
			return string(buf[n:]), nil
		}
	}
	return "", fmt.Errorf("pow: no nonce found at difficulty %d", difficulty)
}
