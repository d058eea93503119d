package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pkuinfo/harness/examples/demo-canteen/canteen"
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
	// The in-process tests expect the English messages; the scripts set their own locale
	// (Setup below, and `env LANG=…` in a script). A child run as a script command keeps the
	// script's environment.
	if base := filepath.Base(os.Args[0]); base != "harness" && base != "demo-canteen" && base != "static-http" {
		os.Unsetenv("LC_ALL")
		os.Unsetenv("LC_MESSAGES")
		os.Setenv("LANG", "en_US.UTF-8")
	}
	testscript.Main(m, map[string]func(){
		"harness": func() { os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
		// A static file server standing in for the README's `python3 -m http.server`.
		"static-http": staticHTTP,
		// The README's demo remote plugin, as `go run ./examples/demo-canteen` runs it.
		"demo-canteen": func() {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			code := canteen.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
			stop()
			os.Exit(code)
		},
	})
}

// TestScript runs every testdata/script/*.txtar: one behaviour of the CLI per script.
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: *updateScripts,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode": cmdExitCode, "bg": cmdBg, "stopbg": cmdStopBg, "waitmatch": cmdWaitMatch,
			"glob": cmdGlob, "httpget": cmdHTTPGet,
			"campus-expire":  cmdCampusExpire,
			"campus-set":     cmdCampusSet,
			"campus-answers": cmdCampusAnswers,
			"mockllm":        cmdMockLLM,
		},
		Setup: func(env *testscript.Env) error {
			// English unless a script asks otherwise (lang.txtar walks both languages).
			env.Setenv("LANG", "en_US.UTF-8")
			repo, err := filepath.Abs("../..") // the repository, for readme.txtar
			env.Setenv("REPO", repo)
			// Stand-ins for IAAA and every campus service (host/campus/campustest), which
			// `harness campus login` and the campus client reach through HARNESS_CAMPUS_ENDPOINTS;
			// the key of the sealed secrets goes to a key file (no keyring in tests).
			st := campustest.New()
			env.Defer(st.Close)
			env.Values["campus"] = st
			env.Setenv(campus.EndpointsEnv, st.Env())
			env.Setenv("HARNESS_KEYRING", "off")
			return err
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
// CLI's exit codes 1 and 2 mean different things, docs/DECISIONS.md §9).
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

// bgProcs are the processes `bg` started, by script and name.
var bgProcs = map[*testscript.TestScript]map[string]*exec.Cmd{}

// cmdBg is the script command `bg NAME PROG ARGS…`: it starts PROG (found in the script's
// $PATH, where testscript puts `harness`) in the background with the script's environment,
// in the script's current directory, its stdout and stderr going to $WORK/NAME.stdout and
// $WORK/NAME.stderr (wherever the script has cd'd to), which a server's
// address can be read from with waitmatch while it runs (testscript's own `&` only shows
// output after the process ends). The process gets SIGINT at `stopbg NAME` or at the end of
// the script, then SIGKILL after 10 s.
func cmdBg(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: bg NAME PROG [ARGS…]")
	}
	name, prog := args[0], args[1]
	path := prog
	if !strings.Contains(prog, "/") {
		for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
			if fi, err := os.Stat(filepath.Join(dir, prog)); err == nil && !fi.IsDir() {
				path = filepath.Join(dir, prog)
				break
			}
		}
	}
	cmd := exec.Command(path, args[2:]...)
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = scriptEnv(ts)
	out, err := os.Create(filepath.Join(ts.Getenv("WORK"), name+".stdout"))
	ts.Check(err)
	errf, err := os.Create(filepath.Join(ts.Getenv("WORK"), name+".stderr"))
	ts.Check(err)
	cmd.Stdout, cmd.Stderr = out, errf
	ts.Check(cmd.Start())
	if bgProcs[ts] == nil {
		bgProcs[ts] = map[string]*exec.Cmd{}
	}
	bgProcs[ts][name] = cmd
	ts.Defer(func() {
		if c := bgProcs[ts][name]; c != nil {
			stopProc(c)
		}
		delete(bgProcs, ts)
		out.Close()
		errf.Close()
	})
}

// scriptEnv is the environment of the script's commands, as `exec` gives it.
func scriptEnv(ts *testscript.TestScript) []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "WORK", "TMPDIR", "XDG_DATA_HOME", "LANG", "LC_ALL", "LC_MESSAGES",
		"GOCOVERDIR", "HARNESS_MCP_TOKEN", "PLUGIN_TOKEN"} {
		if v := ts.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// stopProc sends SIGINT, waits up to 10 s, then kills; it returns the exit code.
func stopProc(c *exec.Cmd) int {
	_ = c.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = c.Process.Kill()
		<-done
	}
	return c.ProcessState.ExitCode()
}

// cmdStopBg is `stopbg NAME`: SIGINT to the process `bg NAME` started; it fails unless the
// process then exits with status 0 (a clean stop).
func cmdStopBg(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: stopbg NAME")
	}
	c := bgProcs[ts][args[0]]
	if c == nil {
		ts.Fatalf("stopbg: no background process %s", args[0])
	}
	delete(bgProcs[ts], args[0])
	if code := stopProc(c); (code == 0) == neg {
		ts.Fatalf("stopbg %s: exit status %d", args[0], code)
	}
}

// cmdWaitMatch is `waitmatch FILE REGEX [VAR]`: it waits up to 30 s for FILE to match REGEX
// (multi-line mode) and sets $VAR to the first group of the match.
func cmdWaitMatch(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: waitmatch FILE REGEX [VAR]")
	}
	re, err := regexp.Compile("(?m)" + args[1])
	ts.Check(err)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(ts.MkAbs(args[0]))
		if m := re.FindSubmatch(b); m != nil {
			if len(args) == 3 {
				if len(m) < 2 {
					ts.Fatalf("waitmatch: %s has no group", args[1])
				}
				ts.Setenv(args[2], string(m[1]))
			}
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("waitmatch: %s did not match %s within 30s; it holds:\n%s", args[0], args[1], b)
		}
	}
}

// staticHTTP is the script program `static-http DIR`: it serves DIR on 127.0.0.1 (a free port)
// until SIGINT, printing "Serving HTTP on 127.0.0.1 port N (http://127.0.0.1:N/)" as
// `python3 -m http.server --bind 127.0.0.1` does.
func staticHTTP() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: static-http DIR")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	fmt.Printf("Serving HTTP on 127.0.0.1 port %d (http://127.0.0.1:%d/) ...\n", port, port)
	srv := &http.Server{Handler: http.FileServer(http.Dir(os.Args[1])), ReadHeaderTimeout: 5 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { <-ctx.Done(); srv.Close() }()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// cmdGlob is `glob PROG ARGS…`: exec with each argument that holds a shell pattern (*, ?, [)
// replaced by its matches, sorted, relative to the script's directory, as the shell does for the
// README's `harness plugin test plugins/*/`; a pattern ending in / matches folders only, as in the shell, and one without matches stays as it is.
func cmdGlob(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 {
		ts.Fatalf("usage: glob PROG [ARGS…]")
	}
	var out []string
	for _, a := range args[1:] {
		if !strings.ContainsAny(a, "*?[") {
			out = append(out, a)
			continue
		}
		m, err := filepath.Glob(ts.MkAbs(a))
		ts.Check(err)
		if len(m) == 0 {
			out = append(out, a)
		}
		for _, p := range m {
			if strings.HasSuffix(a, "/") { // as in the shell, a pattern ending in / matches folders only
				if st, err := os.Stat(p); err != nil || !st.IsDir() {
					continue
				}
			}
			rel, err := filepath.Rel(ts.MkAbs("."), p)
			ts.Check(err)
			out = append(out, rel)
		}
	}
	err := ts.Exec(args[0], out...)
	if (err != nil) != neg {
		ts.Fatalf("glob %s: %v", args[0], err)
	}
}

// cmdHTTPGet is `httpget URL FILE`, the README's `curl -s URL`: it writes the body of a GET to
// FILE (for grep and cmp) and fails unless the status is 200.
func cmdHTTPGet(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: httpget URL FILE")
	}
	res, err := http.Get(args[0])
	ts.Check(err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), b, 0o644))
	if res.StatusCode != http.StatusOK {
		ts.Fatalf("GET %s: %s\n%s", args[0], res.Status, b)
	}
}
