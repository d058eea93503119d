package cli

import (
	"errors"
	"flag"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

var updateScripts = flag.Bool("update", false, "rewrite the cmp golden sections of testdata/script/*.txtar")

// TestMain registers the real entry point as the `harness` command of the scripts
// (STYLE §13): each script runs the command in a child process, exactly as a user would.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"harness": func() { os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScript runs every testdata/script/*.txtar: one behaviour of the CLI per script.
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: *updateScripts,
		Cmds:          map[string]func(ts *testscript.TestScript, neg bool, args []string){"exitcode": cmdExitCode, "mockllm": cmdMockLLM},
	})
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
