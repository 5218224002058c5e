// Package cmd holds tollgate's cobra commands: flags become options, a
// package does the work, a renderer writes it, and errors become exit codes
// in exactly one place (Execute).
package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// Exit codes of SPEC §5.
const (
	ExitOK          = 0
	ExitGateFailed  = 1
	ExitUsage       = 2
	ExitNoMeasure   = 3
	ExitInterrupted = 130
)

// Version is the tool's version, set at build time with
// -ldflags "-X github.com/tollgate-dev/tollgate/cmd.Version=v1.2.3".
var Version = "v0.1.0-dev"

// ExitError carries an exit code out of a command's RunE. Every error that
// is not an ExitError exits 2 when it came from flag parsing and 1 otherwise.
type ExitError struct {
	Code int
	Err  error
}

// Error returns the wrapped error's message.
func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

// Unwrap returns the wrapped error.
func (e *ExitError) Unwrap() error { return e.Err }

// usageErr marks err as a usage or configuration error (exit 2).
func usageErr(err error) error { return &ExitError{Code: ExitUsage, Err: err} }

// usageErrorf is usageErr with fmt.Errorf formatting.
func usageErrorf(format string, a ...any) error {
	return usageErr(fmt.Errorf(format, a...))
}

// IOStreams are where a command reads and writes; tests swap them.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// NewCmdRoot builds the root command with every subcommand.
func NewCmdRoot(io IOStreams) *cobra.Command {
	root := &cobra.Command{
		Use:   "tollgate",
		Short: "Load tester and timeout tuner for LLM APIs and gateways",
		Long: `tollgate drives real streaming and batch calls to LLM APIs (Anthropic Messages,
OpenAI Chat Completions and Responses, any OpenAI-compatible server or gateway)
through one phased-timeout engine, records HdrHistograms of every phase, and
recommends route timeouts from the measurements.

Start with:  tollgate probe      (runs against the embedded simulator, no key needed)`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       Version,
	}
	root.SetIn(io.In)
	root.SetOut(io.Out)
	root.SetErr(io.ErrOut)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErr(fmt.Errorf("%w (see '%s --help')", err, c.CommandPath()))
	})
	for _, add := range subcommands {
		root.AddCommand(add(io))
	}
	root.AddCommand(newCmdVersion(io))
	return root
}

// subcommands holds a constructor per command file; each file registers
// itself in an init function so that commands can be added independently.
var subcommands []func(IOStreams) *cobra.Command

func newCmdVersion(io IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintf(io.Out, "tollgate %s\n", Version)
			return err
		},
	}
}

// Execute runs the root command with os.Args and returns the exit code.
// It is the one place where errors become exit codes.
func Execute() int {
	// The first SIGINT/SIGTERM cancels ctx: the probe stops new calls,
	// cancels those in flight and writes what it measured. Then the
	// signals get their default action back, so a second one exits at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop()
	}()
	streams := IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	return run(ctx, NewCmdRoot(streams), os.Args[1:], streams.ErrOut)
}

// run executes root with args and maps its error to an exit code.
func run(ctx context.Context, root *cobra.Command, args []string, errOut io.Writer) int {
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	code := ExitGateFailed
	var exit *ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.Code
	case isCobraUsageError(err):
		code = ExitUsage
	}
	if msg := err.Error(); msg != "" && !(exit != nil && exit.Err == nil) {
		fmt.Fprintf(errOut, "tollgate: %s\n", msg)
	}
	return code
}

// isCobraUsageError reports errors cobra returns for a bad command line
// before any RunE ran (unknown command, wrong argument count).
func isCobraUsageError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "requires exactly", "unknown flag", "unknown shorthand", "invalid argument", "flag needs an argument", "required flag"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
