package cli

import (
	"errors"
	"flag"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/pkuinfo/harness/host/abilities"
	"github.com/pkuinfo/harness/host/campus"
	"github.com/pkuinfo/harness/host/campus/campustest"
)

var updateScripts = flag.Bool("update", false, "rewrite the cmp golden sections of testdata/script/*.txtar")

// TestMain registers the real entry point as the `harness` command of the scripts
// (STYLE §13): each script runs the command in a child process, exactly as a user would.
func TestMain(m *testing.M) {
	// Keys of sealed secrets go to key files beside the temporary data directories, never to the
	// developer's OS keyring (host/vault).
	os.Setenv("HARNESS_KEYRING", "off")
	testscript.Main(m, map[string]func(){
		"harness": func() { os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScript runs every testdata/script/*.txtar: one behaviour of the CLI per script.
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: *updateScripts,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode":       cmdExitCode,
			"campus-expire":  cmdCampusExpire,
			"campus-set":     cmdCampusSet,
			"campus-answers": cmdCampusAnswers,
			"mockllm":        cmdMockLLM,
		},
		Setup: func(env *testscript.Env) error {
			// Stand-ins for IAAA and every campus service (host/campus/campustest), which
			// `harness campus login` and the campus client reach through HARNESS_CAMPUS_ENDPOINTS;
			// the key of the sealed secrets goes to a key file (no keyring in tests).
			st := campustest.New()
			env.Defer(st.Close)
			env.Values["campus"] = st
			env.Setenv(campus.EndpointsEnv, st.Env())
			env.Setenv("HARNESS_KEYRING", "off")
			return nil
		},
	})
}

// cmdCampusExpire is the script command `campus-expire SERVICE`: the stand-in ends every session
// of SERVICE, as the real service does when a session runs out mid-use.
func cmdCampusExpire(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: campus-expire SERVICE")
	}
	ts.Value("campus").(*campustest.Stand).Expire(args[0])
}

// cmdCampusSet is the script command `campus-set sms|activation|otp|its-own|qr-scan|qr-expire`: Treehole's
// SMS check becomes due, the account needs activation, the account has the stand-in's
// authenticator bound, ITS has its own account (campustest.ITSUser2), the QR code counts as scanned on the first poll, or it has expired.
func cmdCampusSet(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: campus-set sms|activation|otp|its-own|qr-scan|qr-expire")
	}
	ts.Value("campus").(*campustest.Stand).Set(func(s *campustest.Stand) {
		switch args[0] {
		case "sms":
			s.TreeholeSMS = true
		case "activation":
			s.NeedsActivation = true
		case "otp":
			s.OTPSecret = campustest.BindSecret
		case "its-own":
			s.ITSUser, s.ITSPassword = campustest.ITSUser2, campustest.ITSPassword2
		case "qr-scan":
			s.QRScanAfter = 1
		case "qr-expire":
			s.QRExpireAfter = 1
		default:
			ts.Fatalf("campus-set: unknown %q", args[0])
		}
	})
}

// cmdCampusAnswers is the script command `campus-answers FILE LINE…`: it writes the lines to FILE,
// one a line, with {otp} replaced by the current code of the stand-in's authenticator
// (campustest.BindSecret), for a prompt that asks for one.
func cmdCampusAnswers(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: campus-answers FILE LINE…")
	}
	code, err := abilities.Code(campustest.BindSecret, time.Now())
	ts.Check(err)
	text := strings.ReplaceAll(strings.Join(args[1:], "\n")+"\n", "{otp}", code)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(text), 0o600))
}

// cmdExitCode is the script command `exitcode N PROG ARGS…`: it runs PROG like exec and fails
// unless PROG exits with status N (testscript's `! exec` only tells zero from non-zero, and the
// CLI's exit codes 1 and 2 mean different things, SPEC-DECISIONS §9).
func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N PROG [ARGS…]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: bad status %q", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}
