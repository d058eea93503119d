package cli

import "fmt"

// Version is the harness release, set at build time with -ldflags "-X …cli.Version=…".
var Version = "0.1.0-dev"

func init() {
	Register(&Command{
		Path:    "version",
		Summary: "print the harness version",
		Run: func(env *Env) int {
			fmt.Fprintln(env.Stdout, "harness", Version)
			return ExitOK
		},
	})
}
