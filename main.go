// Command tollgate is a load tester and timeout tuner for LLM APIs and the
// gateways in front of them. See README.md.
package main

import (
	"os"

	"github.com/tollgate-dev/tollgate/cmd"
)

func main() { os.Exit(cmd.Execute()) }
