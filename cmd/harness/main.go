// Command harness is the single PKU harness binary: the plugin author CLI, the host, the MCP
// server and the Cloud reference server. All logic lives in internal/cli.
package main

import (
	"os"

	"github.com/pkuinfo/harness/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
