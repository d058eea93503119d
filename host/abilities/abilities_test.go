package abilities

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pkuinfo/harness/host/store"
	"github.com/pkuinfo/harness/plugin"
)

// Every operation of the catalogue has a handler, and a tool weaker than
// the operation's effect is refused before anything runs.
func TestEveryOpAndEffectRefusal(t *testing.T) {
	s, _ := newTestSet(t)
	for _, a := range plugin.Abilities {
		for _, op := range a.Ops {
			if s.ops[op.Name()] == nil {
				t.Errorf("%s: no handler", op.Name())
			}
			for _, e := range plugin.Effects {
				_, err := do(t, s, "p", e, op.Name(), `{"bogus":1}`)
				if e.AtLeast(op.Effect) {
					// Allowed: the handler runs and refuses the bad argument.
					if err == nil || err.Error() == fmt.Sprintf("ability %s: the operation is %s, stronger than this %s tool", op.Name(), op.Effect, e) {
						t.Errorf("%s from a %s tool: %v", op.Name(), e, err)
					}
					continue
				}
				want := fmt.Sprintf("ability %s: the operation is %s, stronger than this %s tool", op.Name(), op.Effect, e)
				if err == nil || err.Error() != want {
					t.Errorf("%s from a %s tool: error %v, want %q", op.Name(), e, err, want)
				}
			}
		}
	}
	if len(s.ops) != 21 {
		t.Errorf("%d handlers, want the catalogue's 21", len(s.ops))
	}
}

func TestRefusals(t *testing.T) {
	s, _ := newTestSet(t)
	runSteps(t, s, []step{
		{op: "todos.fly", isErr: true, want: "ability todos.fly: unknown ability (see the host abilities table)"},
		{op: "kv.get", isErr: true, want: "ability kv.get: unknown ability (see the host abilities table)"},
		{plugin: "q", op: "otp.code", effect: plugin.EffectRead, isErr: true, want: "ability otp.code: otp is not in the abilities of plugin q"},
		{plugin: "zz", op: "crypto.sha256", isErr: true, want: "ability crypto.sha256: plugin zz is not installed"},
		{op: "crypto.sha256", args: `[1]`, isErr: true, want: "ability crypto.sha256: args must be an object, not list"},
		{op: "todos.add", effect: plugin.EffectRead, args: `{"title":"x"}`, isErr: true, want: "ability todos.add: the operation is write, stronger than this read tool"},
		{op: "todos.add", effect: plugin.EffectMoney, args: `{"title":"money tools may write"}`,
			want: `{"id":1,"title":"money tools may write","notes":"","due":null,"done":false,"source":"p","created":1898847000000,"updated":1898847000000}`},
	})
}

func TestSmallOps(t *testing.T) {
	s, _ := newTestSet(t)
	runSteps(t, s, []step{
		{op: "crypto.sha256", args: `{"text":"abc"}`, want: `"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"`},
		{op: "crypto.sha256", args: `{"text":""}`, want: `"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"`},
		{op: "crypto.sha256", args: `{}`, isErr: true, want: "ability crypto.sha256: text is required"},
		{op: "crypto.sha256", args: `{"text":5}`, isErr: true, want: "ability crypto.sha256: text must be a string, not number"},
		{op: "browser.open", args: `{"url":"https://www.pku.edu.cn/a?b=1"}`, want: `{"status":"open_url","url":"https://www.pku.edu.cn/a?b=1","target":"browser"}`},
		{op: "browser.open", args: `{"url":"http://www.pku.edu.cn/"}`, isErr: true, want: `ability browser.open: url "http://www.pku.edu.cn/": only https URLs with a host (and no user info) can be opened`},
		{op: "browser.open", args: `{"url":"javascript:alert(1)"}`, isErr: true, want: `ability browser.open: url "javascript:alert(1)": only https URLs with a host (and no user info) can be opened`},
		{op: "campusPage.open", args: `{"service":"treehole"}`, want: `{"status":"open_url","url":"https://treehole.pku.edu.cn/web/","target":"campusPage","service":"treehole","signedIn":false}`},
		{op: "campusPage.open", args: `{"service":"its"}`, isErr: true, want: "ability campusPage.open: campus service its is not in the campus of plugin p"},
		{op: "campusPage.open", args: `{"service":"canteen"}`, isErr: true, want: `ability campusPage.open: service "canteen" is not a campus service`},
		{op: "sms.awaitCode", want: `{"status":"needs_input","fields":[{"name":"code","type":"string","source":"sms","pattern":"^\\d{4,8}$"}],"message":"请填入短信验证码 / Enter the code from the SMS"}`},
		{op: "files.pick", args: `{"types":[".pdf","image/*"],"multiple":true}`,
			want: `{"status":"needs_input","fields":[{"name":"files","type":"array","source":"files","types":[".pdf","image/*"],"multiple":true}],"message":"请选择文件 / Pick files"}`},
		{op: "files.pick", args: `{"types":["pdf"]}`, isErr: true, want: "ability files.pick: types[0]: want a MIME type such as image/* or an extension such as .pdf"},
		{op: "cloud.call", args: `{"fn":"sync","input":{}}`, isErr: true, want: "ability cloud.call: cloud not configured: no PKU harness Cloud provider is set, so server functions cannot run (Settings → Cloud, or `harness cloud use URL`)"},
		{op: "cloud.call", args: `{}`, isErr: true, want: "ability cloud.call: fn is required"},
		{op: "otp.code", effect: plugin.EffectRead, want: `null`},
	})
}

func TestTodos(t *testing.T) {
	s, clk := newTestSet(t)
	runSteps(t, s, []step{
		{op: "todos.add", args: `{"title":"交作业","due":1898900000000}`,
			want: `{"id":1,"title":"交作业","notes":"","due":1898900000000,"done":false,"source":"p","created":1898847000000,"updated":1898847000000}`},
		{op: "todos.add", args: `{"title":"读论文","notes":"第三章"}`,
			want: `{"id":2,"title":"读论文","notes":"第三章","due":null,"done":false,"source":"p","created":1898847000000,"updated":1898847000000}`},
		{plugin: "q", op: "todos.add", args: `{"title":"早交","due":1898850000000}`,
			want: `{"id":3,"title":"早交","notes":"","due":1898850000000,"done":false,"source":"q","created":1898847000000,"updated":1898847000000}`},
		{op: "todos.add", args: `{"title":""}`, isErr: true, want: "ability todos.add: title is empty"},
		{op: "todos.add", args: `{"title":"x","due":"tomorrow"}`, isErr: true, want: "ability todos.add: due must be a time in Unix milliseconds (use date(...)) or null"},
		{op: "todos.add", args: `{"title":"x","color":"red"}`, isErr: true, want: `ability todos.add: unknown argument "color" (allowed: title, notes, due)`},
		{op: "todos.list", effect: plugin.EffectRead, args: `{"limit":2}`,
			want: `{"items":[{"id":3,"title":"早交","notes":"","due":1898850000000,"done":false,"source":"q","created":1898847000000,"updated":1898847000000},{"id":1,"title":"交作业","notes":"","due":1898900000000,"done":false,"source":"p","created":1898847000000,"updated":1898847000000}],"hasMore":true,"truncated":false}`},
		{op: "todos.setDone", args: `{"id":1}`,
			want: `{"id":1,"title":"交作业","notes":"","due":1898900000000,"done":true,"source":"p","created":1898847000000,"updated":1898847000000}`},
		{op: "todos.update", args: `{"id":2,"title":"读两篇论文","due":null}`,
			want: `{"id":2,"title":"读两篇论文","notes":"第三章","due":null,"done":false,"source":"p","created":1898847000000,"updated":1898847000000}`},
		{op: "todos.update", args: `{"id":3,"title":"not mine"}`, isErr: true, want: "ability todos.update: to-do 3 was added by q: a plugin changes only its own to-dos"},
		{op: "todos.remove", args: `{"id":99}`, isErr: true, want: "ability todos.remove: no to-do 99"},
		{op: "todos.remove", args: `{"id":2}`, want: `{"removed":true,"id":2}`},
		{op: "todos.list", effect: plugin.EffectRead, args: `{"done":true}`,
			want: `{"items":[{"id":1,"title":"交作业","notes":"","due":1898900000000,"done":true,"source":"p","created":1898847000000,"updated":1898847000000}],"hasMore":false,"truncated":false}`},
		{op: "todos.list", effect: plugin.EffectRead, args: `{"limit":0}`, isErr: true, want: "ability todos.list: limit: 0 is out of range 1–200"},
	})
	_ = clk
}

func TestTimetable(t *testing.T) {
	s, _ := newTestSet(t)
	runSteps(t, s, []step{
		{op: "timetable.upsert", args: `{"entries":[{"id":"math","title":"高等数学","weekday":3,"start":"08:00","end":"09:50","location":"二教 101","weeks":[1,2,3]},{"id":"phys","title":"普通物理","weekday":1,"start":"10:10","end":"12:00"}]}`,
			want: `{"upserted":2}`},
		{plugin: "q", op: "timetable.upsert", args: `{"entries":[{"id":"math","title":"同名不同插件","weekday":1,"start":"08:00","end":"09:00"}]}`, want: `{"upserted":1}`},
		{op: "timetable.upsert", args: `{"entries":[{"id":"phys","title":"普通物理（改）","weekday":1,"start":"10:10","end":"12:00","teacher":"王老师"}]}`, want: `{"upserted":1}`},
		{op: "timetable.upsert", args: `{"entries":[{"id":"x","title":"bad","weekday":8,"start":"08:00","end":"09:00"}]}`, isErr: true, want: "ability timetable.upsert: entries[0]: weekday: 8 is out of range 1–7"},
		{op: "timetable.upsert", args: `{"entries":[{"id":"x","title":"bad","weekday":1,"start":"9:00","end":"10:00"}]}`, isErr: true, want: `ability timetable.upsert: entries[0]: start and end must be HH:mm (got "9:00" and "10:00")`},
		{op: "timetable.upsert", args: `{"entries":[{"id":"x","title":"bad","weekday":1,"start":"10:00","end":"09:00"}]}`, isErr: true, want: "ability timetable.upsert: entries[0]: end 09:00 is not after start 10:00"},
		{op: "timetable.get", effect: plugin.EffectRead, args: `{"weekday":1}`,
			want: `{"entries":[{"id":"math","title":"同名不同插件","weekday":1,"start":"08:00","end":"09:00","location":null,"teacher":null,"note":null,"weeks":[],"source":"q"},{"id":"phys","title":"普通物理（改）","weekday":1,"start":"10:10","end":"12:00","location":null,"teacher":"王老师","note":null,"weeks":[],"source":"p"}]}`},
		{op: "timetable.remove", args: `{"ids":["math","nope"]}`, want: `{"removed":1}`},
		{op: "timetable.remove", args: `{}`, isErr: true, want: "ability timetable.remove: give ids (a list of entry ids) or all: true"},
		{op: "timetable.remove", args: `{"all":true}`, want: `{"removed":1}`},
		{op: "timetable.get", effect: plugin.EffectRead,
			want: `{"entries":[{"id":"math","title":"同名不同插件","weekday":1,"start":"08:00","end":"09:00","location":null,"teacher":null,"note":null,"weeks":[],"source":"q"}]}`},
	})
}

func TestOTPVectors(t *testing.T) {
	// RFC 6238 appendix B, SHA-1, last 6 of the 8 digits.
	secret, err := NormalizeSecret("gezd gnbv gy3t qojq gezd gnbv gy3t qojq")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		unix int64
		want string
	}{{59, "287082"}, {1111111109, "081804"}, {1111111111, "050471"}, {1234567890, "005924"}, {2000000000, "279037"}, {20000000000, "353130"}} {
		got, err := Code(secret, time.Unix(tc.unix, 0))
		if err != nil || got != tc.want {
			t.Errorf("T=%d: %q, %v; want %q", tc.unix, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, want, err string }{
		{in: "JBSWY3DPEHPK3PXP", want: "JBSWY3DPEHPK3PXP"},
		{in: "jbswy3dpehpk3pxp====", want: "JBSWY3DPEHPK3PXP"},
		{in: "otpauth://totp/iaaa.pku.edu.cn:2000000000?secret=JBSWY3DPEHPK3PXP&issuer=iaaa.pku.edu.cn", want: "JBSWY3DPEHPK3PXP"},
		{in: "otpauth://hotp/x?secret=JBSWY3DPEHPK3PXP&counter=1", err: "otp secret: the URI is hotp, not totp"},
		{in: "JBSWY3DP1", err: "otp secret: character '1' at 9 is not Base32 (A–Z, 2–7)"},
		{in: "JBSW", err: "otp secret: 20 bits, want at least 80"},
		{in: "  ", err: "otp secret: empty"},
		// The codes are SHA-1, 6 digits, 30 s: a URI asking for others would get wrong codes.
		{in: "otpauth://totp/x?secret=JBSWY3DPEHPK3PXP&algorithm=SHA512", err: `otp secret: the URI asks for algorithm "SHA512"; the IAAA authenticator's codes are SHA1, 6 digits, every 30 s`},
		{in: "otpauth://totp/x?secret=JBSWY3DPEHPK3PXP&digits=8", err: `otp secret: the URI asks for digits "8"; the IAAA authenticator's codes are SHA1, 6 digits, every 30 s`},
		{in: "otpauth://totp/x?secret=JBSWY3DPEHPK3PXP&period=99999999999", err: `otp secret: the URI asks for period "99999999999"; the IAAA authenticator's codes are SHA1, 6 digits, every 30 s`},
		{in: "otpauth://totp/x?secret=JBSWY3DPEHPK3PXP&algorithm=sha1&digits=6&period=30", want: "JBSWY3DPEHPK3PXP"},
		// A URI that does not parse is not echoed: it holds the secret.
		{in: "otpauth://totp/%zz?secret=JBSWY3DPEHPK3PXP", err: `otp secret: bad otpauth URI: invalid URL escape "%zz"`},
	} {
		got, err := NormalizeSecret(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("NormalizeSecret(%q) = %q, %v; want error %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("NormalizeSecret(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestOTPCode(t *testing.T) {
	s, clk := newTestSet(t)
	if err := SetOTPSecret(t.Context(), s.db, "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ", clk.t); err != nil {
		t.Fatal(err)
	}
	clk.t = time.Unix(1234567890, 0)
	runSteps(t, s, []step{{op: "otp.code", effect: plugin.EffectRead, want: `"005924"`}})
	if err := ClearOTPSecret(t.Context(), s.db); err != nil {
		t.Fatal(err)
	}
	runSteps(t, s, []step{{op: "otp.code", effect: plugin.EffectRead, want: `null`}})
}

func FuzzNormalizeSecret(f *testing.F) {
	for _, s := range []string{"JBSWY3DPEHPK3PXP", "jbsw y3dp-ehpk 3pxp==", "otpauth://totp/a?secret=JBSWY3DPEHPK3PXP", "0", "", "otpauth://"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := NormalizeSecret(in)
		if err != nil {
			return
		}
		// Invariants: normal form is a fixed point, and it yields a 6-digit code.
		again, err := NormalizeSecret(s)
		if err != nil || again != s {
			t.Fatalf("%q → %q → %q, %v", in, s, again, err)
		}
		code, err := Code(s, time.Unix(59, 0))
		if err != nil || len(code) != 6 {
			t.Fatalf("code of %q: %q, %v", s, code, err)
		}
	})
}

// TestOTPSecretSealed: a secret stored in plain text before migration 211
// is sealed on first read; a new secret is stored sealed only.
func TestOTPSecretSealed(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SQL.ExecContext(ctx, `INSERT INTO otp_secret (id, secret, set_at) VALUES (1, 'JBSWY3DPEHPK3PXP', 1)`)
	got, ok, err := OTPSecret(ctx, db)
	if err != nil || !ok || got != "JBSWY3DPEHPK3PXP" {
		t.Fatalf("%q %v %v", got, ok, err)
	}
	var plain string
	var sealed []byte
	db.SQL.QueryRowContext(ctx, `SELECT secret, sealed FROM otp_secret`).Scan(&plain, &sealed)
	if plain != "" || len(sealed) == 0 {
		t.Fatalf("after read: plain %q, sealed %d bytes", plain, len(sealed))
	}
	if err := SetOTPSecret(ctx, db, "GEZDGNBVGY3TQOJQGEZDGNBVGY", time.Now()); err != nil {
		t.Fatal(err)
	}
	db.SQL.QueryRowContext(ctx, `SELECT secret FROM otp_secret`).Scan(&plain)
	if plain != "" {
		t.Fatalf("SetOTPSecret stored %q in plain text", plain)
	}
	if got, _, _ := OTPSecret(ctx, db); got != "GEZDGNBVGY3TQOJQGEZDGNBVGY" {
		t.Fatalf("read back %q", got)
	}
}
