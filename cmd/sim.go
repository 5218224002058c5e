package cmd

import (
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tollgate-dev/tollgate/sim"
)

func init() { subcommands = append(subcommands, newCmdSim) }

// SimOptions are the flags of `tollgate sim`.
type SimOptions struct {
	// Listen is the host:port to listen on.
	Listen string
	// Profile is a named latency profile.
	Profile string
	// ProfileFile is a YAML or JSON profile; it wins over Profile.
	ProfileFile string
	// Seed makes schedules and fault draws reproducible.
	Seed int64
	// Faults are NAME@RATE specs.
	Faults []string
	// Replay is a captured .sse file served to streaming requests.
	Replay string
	// Log writes one line per request to stderr.
	Log bool
}

// NewCmdSim builds `tollgate sim`; runF replaces the run for tests of flag
// parsing (nil runs the simulator).
func NewCmdSim(ios IOStreams, runF func(*cobra.Command, *SimOptions) error) *cobra.Command {
	opts := &SimOptions{}
	c := &cobra.Command{
		Use:   "sim",
		Short: "Serve the simulated provider (Anthropic, OpenAI chat and Responses) on loopback",
		Long: `Serve a simulated LLM provider: POST /v1/messages (Anthropic), POST /v1/chat/completions
and POST /v1/responses (OpenAI), streaming and not, with latency drawn from a profile
(realistic, fast, thinking, or --profile-file) and faults injected per request with the
header X-Tollgate-Sim-Fault: NAME or at a rate with --fault NAME@RATE.

Faults: ` + faultList() + `.
See sim/README.md for the bytes each fault sends.`,
		Example: `  tollgate sim
  tollgate sim --listen 127.0.0.1:8080 --profile realistic --seed 7 --fault http-429@2% --log
  curl -N localhost:8080/v1/messages -H 'X-Tollgate-Sim-Fault: ping-stall' \
    -d '{"model":"m","max_tokens":64,"stream":true,"messages":[]}'`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(c, opts)
			}
			return runSim(c, ios, opts)
		},
	}
	f := c.Flags()
	f.StringVar(&opts.Listen, "listen", "127.0.0.1:8080", "address to listen on (host:port; port 0 picks a free one)")
	f.StringVar(&opts.Profile, "profile", "realistic", "latency profile: "+strings.Join(sim.ProfileNames(), ", "))
	f.StringVar(&opts.ProfileFile, "profile-file", "", "YAML or JSON latency profile (overrides --profile)")
	f.Int64Var(&opts.Seed, "seed", 1, "seed of every schedule and fault draw")
	f.StringArrayVar(&opts.Faults, "fault", nil, "inject fault NAME at RATE (0.05 or 5%); repeatable")
	f.StringVar(&opts.Replay, "replay", "", "serve this captured .sse file to streaming requests, spaced by the profile")
	f.BoolVar(&opts.Log, "log", false, "log one line per request to stderr")
	return c
}

func newCmdSim(ios IOStreams) *cobra.Command { return NewCmdSim(ios, nil) }

func faultList() string {
	names := make([]string, 0, len(sim.Faults()))
	for _, f := range sim.Faults() {
		names = append(names, string(f))
	}
	return strings.Join(names, ", ")
}

// simConfig turns the flags into a sim.Config: the one place they are read.
func simConfig(opts *SimOptions, log io.Writer) (sim.Config, error) {
	cfg := sim.Config{Seed: opts.Seed}
	var err error
	if opts.ProfileFile != "" {
		cfg.Profile, err = sim.LoadProfile(opts.ProfileFile)
		if err != nil {
			return cfg, fmt.Errorf("--profile-file: %w", err)
		}
	} else if cfg.Profile, err = sim.NamedProfile(opts.Profile); err != nil {
		return cfg, fmt.Errorf("--profile: %w", err)
	}
	sum := 0.0
	for _, s := range opts.Faults {
		fr, err := sim.ParseFaultRate(s)
		if err != nil {
			return cfg, fmt.Errorf("--fault: %w", err)
		}
		cfg.Faults = append(cfg.Faults, fr)
		sum += fr.Rate
	}
	if sum > 1 {
		return cfg, fmt.Errorf("--fault: the rates add up to %g, more than 1 (at most one fault per call)", sum)
	}
	if opts.Replay != "" {
		if cfg.Replay, err = sim.LoadReplay(opts.Replay); err != nil {
			return cfg, fmt.Errorf("--replay: %w", err)
		}
	}
	if _, _, err := net.SplitHostPort(opts.Listen); err != nil {
		return cfg, fmt.Errorf("--listen %q: %w", opts.Listen, err)
	}
	if opts.Log {
		cfg.Log = log
	}
	return cfg, nil
}

func runSim(c *cobra.Command, ios IOStreams, opts *SimOptions) error {
	cfg, err := simConfig(opts, ios.ErrOut)
	if err != nil {
		return usageErr(err)
	}
	ctx := c.Context()
	run, err := sim.Start(ctx, cfg, opts.Listen)
	if err != nil {
		return usageErr(fmt.Errorf("--listen: %w", err))
	}
	fmt.Fprintf(ios.Out, "tollgate sim: profile %s, seed %d, listening on %s\n", cfg.Profile.Name, cfg.Seed, run.Addr)
	for _, fr := range cfg.Faults {
		fmt.Fprintf(ios.Out, "  fault %s\n", fr)
	}
	fmt.Fprintf(ios.Out, "  anthropic  %s\n  openai     %s\n  responses  %s\n",
		run.BaseURL(sim.APIAnthropic), run.BaseURL(sim.APIOpenAI), run.BaseURL(sim.APIResponses))
	fmt.Fprintf(ios.Out, "Ctrl-C stops it.\n")
	<-ctx.Done()
	if err := run.Close(); err != nil {
		return fmt.Errorf("sim: serve: %w", err)
	}
	// Stopping on SIGINT/SIGTERM is how a simulator ends: exit 0.
	_, err = fmt.Fprintf(ios.Out, "tollgate sim: stopped\n")
	return err
}
