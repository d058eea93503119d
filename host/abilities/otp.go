package abilities

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/pkuinfo/harness/host/store"
	"github.com/pkuinfo/harness/host/vault"
)

func init() {
	store.Register(store.Migration{Version: 100, Name: "authenticator secret", SQL: `
CREATE TABLE otp_secret (
	id     INTEGER PRIMARY KEY CHECK (id = 1), -- one authenticator per host
	secret TEXT    NOT NULL,                   -- Base32, upper case, no padding
	set_at INTEGER NOT NULL                    -- Unix ms
);`})
	store.Register(store.Migration{Version: 211, Name: "authenticator secret sealed", SQL: `
ALTER TABLE otp_secret ADD COLUMN sealed BLOB; -- vault-sealed secret; secret is then ''`})
}

// otpLabel binds the sealed secret to its row (vault.Box.Seal).
const otpLabel = "otp_secret/1"

// totpOpts are the IAAA authenticator's parameters (docs/CAMPUS-PROTOCOLS.md §2.4):
// RFC 6238 over HMAC-SHA-1, 6 digits, 30 s steps from T0 = 0, the current
// step only.
var totpOpts = totp.ValidateOpts{Period: 30, Skew: 0, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

// NormalizeSecret reads an authenticator secret as a user pastes it: Base32
// (spaces, dashes and case ignored, with or without padding), or an
// otpauth:// URI such as IAAA's
// "otpauth://totp/iaaa.pku.edu.cn:ID?secret=…&issuer=iaaa.pku.edu.cn". It
// returns the Base32 secret in upper case without padding, or an error
// saying what is wrong.
func NormalizeSecret(in string) (string, error) {
	in = strings.TrimSpace(in)
	if strings.HasPrefix(strings.ToLower(in), "otpauth://") {
		k, err := otp.NewKeyFromURL(in)
		if err != nil {
			// Not the parser's own text: it quotes the URI, and the URI holds the secret.
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err
			}
			return "", fmt.Errorf("otp secret: bad otpauth URI: %v", err)
		}
		if k.Type() != "totp" {
			return "", fmt.Errorf("otp secret: the URI is %s, not totp", k.Type())
		}
		// The codes are made with totpOpts; a URI asking for other parameters
		// would get codes the server never accepts.
		u, err := url.Parse(in) // parsed above already
		if err != nil {
			return "", errors.New("otp secret: bad otpauth URI")
		}
		q := u.Query()
		for _, p := range []struct{ name, want string }{{"algorithm", "SHA1"}, {"digits", "6"}, {"period", "30"}} {
			if v := q.Get(p.name); v != "" && !strings.EqualFold(v, p.want) {
				return "", fmt.Errorf("otp secret: the URI asks for %s %q; the IAAA authenticator's codes are SHA1, 6 digits, every 30 s", p.name, v)
			}
		}
		in = k.Secret()
		if in == "" {
			return "", errors.New("otp secret: the URI has no secret parameter")
		}
	}
	s := strings.ToUpper(strings.NewReplacer(" ", "", "-", "", "\t", "").Replace(in))
	s = strings.TrimRight(s, "=")
	if s == "" {
		return "", errors.New("otp secret: empty")
	}
	for i, r := range s {
		if !(r >= 'A' && r <= 'Z' || r >= '2' && r <= '7') {
			return "", fmt.Errorf("otp secret: character %q at %d is not Base32 (A–Z, 2–7)", r, i+1)
		}
	}
	if _, err := totp.GenerateCodeCustom(s, time.Unix(0, 0), totpOpts); err != nil {
		return "", fmt.Errorf("otp secret: %w", err)
	}
	if len(s)*5/8 < 10 {
		return "", fmt.Errorf("otp secret: %d bits, want at least 80", len(s)*5)
	}
	return s, nil
}

// Code returns the TOTP code of secret at t: 6 digits, zero-padded.
func Code(secret string, t time.Time) (string, error) {
	return totp.GenerateCodeCustom(secret, t, totpOpts)
}

// SetOTPSecret stores the authenticator secret (`harness otp set`),
// replacing any earlier one, after NormalizeSecret. The secret is sealed
// with the data directory's vault (migration 211); it never lies in the
// database in plain text.
func SetOTPSecret(ctx context.Context, db *store.DB, secret string, now time.Time) error {
	s, err := NormalizeSecret(secret)
	if err != nil {
		return err
	}
	box, err := vault.Open(db.Dir(), vault.DefaultKeyring())
	if err != nil {
		return err
	}
	_, err = db.SQL.ExecContext(ctx, `INSERT INTO otp_secret (id, secret, set_at, sealed) VALUES (1, '', ?, ?)
		ON CONFLICT (id) DO UPDATE SET secret = '', sealed = excluded.sealed, set_at = excluded.set_at`, now.UnixMilli(), box.Seal(otpLabel, []byte(s)))
	if err != nil {
		return fmt.Errorf("otp: store the secret: %w", err)
	}
	return nil
}

// ClearOTPSecret forgets the authenticator secret.
func ClearOTPSecret(ctx context.Context, db *store.DB) error {
	if _, err := db.SQL.ExecContext(ctx, `DELETE FROM otp_secret`); err != nil {
		return fmt.Errorf("otp: forget the secret: %w", err)
	}
	return nil
}

// OTPSecret returns the stored secret; ok is false when none is set. A
// secret stored in plain text before migration 211 is sealed on this read.
func OTPSecret(ctx context.Context, db *store.DB) (secret string, ok bool, err error) {
	var sealed []byte
	err = db.SQL.QueryRowContext(ctx, `SELECT secret, sealed FROM otp_secret WHERE id = 1`).Scan(&secret, &sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("otp: read the secret: %w", err)
	}
	box, err := vault.Open(db.Dir(), vault.DefaultKeyring())
	if err != nil {
		return "", false, err
	}
	if sealed == nil {
		if secret != "" {
			if _, err := db.SQL.ExecContext(ctx, `UPDATE otp_secret SET secret = '', sealed = ? WHERE id = 1`, box.Seal(otpLabel, []byte(secret))); err != nil {
				return "", false, fmt.Errorf("otp: seal the secret: %w", err)
			}
		}
		return secret, secret != "", nil
	}
	plain, err := box.Open(otpLabel, sealed)
	if err != nil {
		return "", false, fmt.Errorf("otp: read the secret: %w", err)
	}
	return string(plain), true, nil
}

// currentCode returns the current code, or ok false when no secret is set.
func (s *Set) currentCode(ctx context.Context) (code string, ok bool, err error) {
	secret, ok, err := OTPSecret(ctx, s.db)
	if err != nil || !ok {
		return "", false, err
	}
	code, err = Code(secret, s.now())
	if err != nil {
		return "", false, fmt.Errorf("otp: the stored secret is unusable (%v): run harness otp set", err)
	}
	return code, true, nil
}

// otpCode is otp.code (read): the current 6-digit code of the IAAA
// authenticator (手机令牌) as a string, or null when no secret is set.
func (s *Set) otpCode(ctx context.Context, c *call) (any, error) {
	if err := c.args.only(); err != nil {
		return nil, err
	}
	code, ok, err := s.currentCode(ctx)
	if err != nil || !ok {
		return nil, err
	}
	return code, nil
}
