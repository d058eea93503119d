package abilities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
)

// maxHashText is the largest text crypto.sha256 hashes: a tool result is at
// most 1 MB (seed 004 "Steps"), so no plugin value is longer.
const maxHashText = 1 << 20

// cryptoSHA256 is crypto.sha256 { text } (read): the SHA-256 of the UTF-8
// bytes of text, as 64 lower-case hex digits.
func (s *Set) cryptoSHA256(_ context.Context, c *call) (any, error) {
	if err := c.args.only("text"); err != nil {
		return nil, err
	}
	text, err := c.args.str("text", true, 0)
	if err != nil {
		return nil, err
	}
	if len(text) > maxHashText {
		return nil, errTooLong("text", len(text), maxHashText)
	}
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:]), nil
}
