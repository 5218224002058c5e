package cmd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tollgate-dev/tollgate/probe"
	"github.com/tollgate-dev/tollgate/probe/shard"
	"github.com/tollgate-dev/tollgate/probe/wire"
	"github.com/tollgate-dev/tollgate/report/gate"
	"github.com/tollgate-dev/tollgate/report/render"
	"github.com/tollgate-dev/tollgate/sim"
)

// Defaults of a probe, chosen so that plain `tollgate probe` against the
// embedded simulator's realistic profile (about 5 s per call) finishes in
// about half a minute with a few hundred calls.
const (
	defaultRequests    = 200
	defaultConcurrency = 50
	defaultMaxTokens   = 256
	defaultSimProfile  = "realistic"
)

// defaultClocks measure rather than judge: generous transport bounds that
// keep a dead target from hanging a probe, and the content clocks off, so
// that the distributions recommendations are drawn from are not cut by the
// very deadlines being tuned. Set a clock to test it.
var defaultClocks = probe.Clocks{
	Connect:   10 * time.Second,
	Head:      60 * time.Second,
	HeadBatch: 10 * time.Minute,
	Idle:      2 * time.Minute,
	Total:     15 * time.Minute,
}

// ProbeOptions is everything `tollgate probe` was asked to do. Flags become
// these options in exactly one place (NewCmdProbe).
type ProbeOptions struct {
	IO IOStreams

	// Target.
	Target         string
	API            string
	Model          string
	APIKeyEnv      string
	Headers        []string
	SimProfile     string
	AllowPlainHTTP bool

	// Workload.
	PromptsPath string
	MaxTokens   int

	// Mode and load.
	Mode        string
	Requests    int
	Duration    time.Duration
	Concurrency int
	Rate        float64
	Arrival     string
	Warmup      int
	Seed        int64
	Shard       string

	// Clocks.
	Clocks      probe.Clocks
	RouteConfig string
	Route       string

	// Batch path.
	Attempts    int
	RetryBudget time.Duration
	JobDeadline time.Duration
	Cursor      string
	Resume      string

	// Output.
	Out       string
	Calls     string
	HLog      string
	HTML      string
	Format    string
	ConfigOut string
	Policy    string
	Quiet     bool

	// Gates.
	FailOn        []string
	Baseline      string
	MaxRegression float64

	// set records which flags were given on the command line.
	set map[string]bool
}

func init() {
	subcommands = append(subcommands, func(io IOStreams) *cobra.Command { return NewCmdProbe(io, nil) })
}

// NewCmdProbe builds `tollgate probe`. runF, when not nil, replaces the run
// so that tests can check flag parsing without making a call.
func NewCmdProbe(io IOStreams, runF func(context.Context, *ProbeOptions) error) *cobra.Command {
	opts := &ProbeOptions{IO: io, Clocks: defaultClocks}
	c := &cobra.Command{
		Use:   "probe",
		Short: "Drive calls, measure every phase, report, recommend timeouts",
		Long: `Drive real streaming and batch calls through the phased-timeout engine, record
HdrHistograms of every phase, report them, and recommend route timeouts.

With no --target the probe runs against the embedded simulator on 127.0.0.1
(profile realistic), so it works on a fresh machine with no key.`,
		Example: `  tollgate probe
  tollgate probe --target https://api.anthropic.com --api anthropic --model claude-sonnet-4-5 --api-key-env ANTHROPIC_API_KEY -n 100 -c 10
  tollgate probe --mode both --rate 5 -d 2m -o results.json --fail-on 'stream.ttft.p99>2s'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.set = map[string]bool{}
			cmd.Flags().Visit(func(f *pflag.Flag) { opts.set[f.Name] = true })
			if err := opts.validate(); err != nil {
				return usageErr(err)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runProbe(cmd.Context(), opts)
		},
	}
	f := c.Flags()
	f.SortFlags = false
	f.StringVar(&opts.Target, "target", "", "base URL as the official SDKs take it (https://api.anthropic.com, https://api.openai.com/v1); empty: the embedded simulator")
	f.StringVar(&opts.API, "api", "anthropic", "wire protocol: "+strings.Join(wire.Names(), ", "))
	f.StringVar(&opts.Model, "model", "", "model name (default: the simulator's \"sim-1\" when no --target)")
	f.StringVar(&opts.APIKeyEnv, "api-key-env", "", "read the API key from this environment variable (never from a flag)")
	f.StringArrayVarP(&opts.Headers, "header", "H", nil, "extra request header 'Name: value' (repeatable)")
	f.StringVar(&opts.SimProfile, "sim-profile", defaultSimProfile, "embedded simulator profile: "+strings.Join(sim.ProfileNames(), ", "))
	f.BoolVar(&opts.AllowPlainHTTP, "allow-plain-http", false, "allow sending a credential over plain HTTP to a host that is not loopback")

	f.StringVar(&opts.PromptsPath, "prompts", "", "JSONL prompts file: {\"prompt\": \"...\"} or {\"messages\": [...]} per line (default: a built-in set)")
	f.IntVar(&opts.MaxTokens, "max-tokens", defaultMaxTokens, "max output tokens per call")

	f.StringVar(&opts.Mode, "mode", probe.ModeStream, "stream, batch, or both")
	f.IntVarP(&opts.Requests, "requests", "n", 0, fmt.Sprintf("measured calls (default %d when no --duration)", defaultRequests))
	f.DurationVarP(&opts.Duration, "duration", "d", 0, "start calls for this long; calls in flight then finish")
	f.IntVarP(&opts.Concurrency, "concurrency", "c", 0, fmt.Sprintf("closed loop: workers (default %d); with --rate: most calls in flight (default unbounded)", defaultConcurrency))
	f.Float64Var(&opts.Rate, "rate", 0, "open loop: calls per second, latency counted from each call's intended start")
	f.StringVar(&opts.Arrival, "arrival", probe.ArrivalConstant, "open-loop arrivals: constant or poisson")
	f.IntVar(&opts.Warmup, "warmup", 0, "calls made first and left out of the statistics")
	f.Int64Var(&opts.Seed, "seed", 1, "seed for prompt order, arrivals and the simulator")
	f.StringVar(&opts.Shard, "shard", "", "run shard I/N of the probe (merge shards with tollgate merge)")

	f.DurationVar(&opts.Clocks.Connect, "connect", defaultClocks.Connect, "connect clock: call start to connection ready (0: off)")
	f.DurationVar(&opts.Clocks.Head, "head", defaultClocks.Head, "head clock of streaming calls: connection ready to response head")
	f.DurationVar(&opts.Clocks.HeadBatch, "head-batch", defaultClocks.HeadBatch, "head clock of non-streaming calls (ADR-0036: the head IS the answer)")
	f.DurationVar(&opts.Clocks.FirstToken, "first-token", defaultClocks.FirstToken, "first_token clock: connection ready to first BODY byte")
	f.DurationVar(&opts.Clocks.Idle, "idle", defaultClocks.Idle, "idle clock: between body reads, any bytes (pings included)")
	f.DurationVar(&opts.Clocks.Total, "total", defaultClocks.Total, "total clock: call start to body end")
	f.DurationVar(&opts.Clocks.TTFT, "ttft", defaultClocks.TTFT, "ttft clock: call start to first content delta (pings do not count)")
	f.DurationVar(&opts.Clocks.Gap, "gap", defaultClocks.Gap, "gap clock: between content deltas (pings do not re-arm it)")
	f.StringVar(&opts.RouteConfig, "route-config", "", "run under a route's timeouts from this YAML file (with --route)")
	f.StringVar(&opts.Route, "route", "", "the route of --route-config")

	f.IntVar(&opts.Attempts, "attempts", probe.DefaultAttempts, "batch path: attempts per item, the first included")
	f.DurationVar(&opts.RetryBudget, "retry-budget", probe.DefaultRetryBudget, "batch path: total waiting between an item's attempts")
	f.DurationVar(&opts.JobDeadline, "job-deadline", 0, "batch path: give up the job after this long and write --cursor (0: none)")
	f.StringVar(&opts.Cursor, "cursor", "", "batch path: write the unprocessed items here when the job ends early")
	f.StringVar(&opts.Resume, "resume", "", "batch path: run exactly the items named in this cursor file")

	f.StringVarP(&opts.Out, "out", "o", "", "write the results file (JSON, tollgate.results/v1)")
	f.StringVar(&opts.Calls, "calls", "", "write one JSON line per call attempt")
	f.StringVar(&opts.HLog, "hlog", "", "write an HdrHistogram interval log")
	f.StringVar(&opts.HTML, "html", "", "write a self-contained HTML report")
	f.StringVar(&opts.Format, "format", "table", "report format on stdout: table, markdown or json")
	f.StringVar(&opts.ConfigOut, "config-out", "", "write the recommended route config (YAML)")
	f.StringVar(&opts.Policy, "policy", "", "recommendation policy file (YAML)")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "no live progress on stderr")

	f.StringArrayVar(&opts.FailOn, "fail-on", nil, "gate: fail (exit 1) when EXPR holds, e.g. 'stream.ttft.p99>2s', 'errors.rate>1%' (repeatable)")
	f.StringVar(&opts.Baseline, "baseline", "", "gate: compare with this results file")
	f.Float64Var(&opts.MaxRegression, "max-regression", gate.DefaultMaxRegression, "gate: percent a percentile may worsen against --baseline")
	return c
}

// validate checks the options that need no file or network, naming the flag.
func (o *ProbeOptions) validate() error {
	if _, err := wire.Lookup(o.API); err != nil {
		return fmt.Errorf("--api: %w", err)
	}
	switch o.Mode {
	case probe.ModeStream, probe.ModeBatch, probe.ModeBoth:
	default:
		return fmt.Errorf("--mode %q: want stream, batch or both", o.Mode)
	}
	if o.Arrival != probe.ArrivalConstant && o.Arrival != probe.ArrivalPoisson {
		return fmt.Errorf("--arrival %q: want constant or poisson", o.Arrival)
	}
	for _, c := range []struct {
		flag string
		bad  bool
		want string
	}{
		{"--requests", o.Requests < 0, "0 or more"}, {"--duration", o.Duration < 0, "0 or more"},
		{"--concurrency", o.Concurrency < 0, "0 or more"}, {"--rate", o.Rate < 0, "0 or more"},
		{"--warmup", o.Warmup < 0, "0 or more"}, {"--max-tokens", o.MaxTokens < 1, "at least 1"},
		{"--attempts", o.Attempts < 1, "at least 1"}, {"--retry-budget", o.RetryBudget < 0, "0 or more"},
		{"--job-deadline", o.JobDeadline < 0, "0 or more"}, {"--max-regression", o.MaxRegression < 0, "0 or more"},
	} {
		if c.bad {
			return fmt.Errorf("%s: want %s", c.flag, c.want)
		}
	}
	if err := o.Clocks.Validate(); err != nil {
		return fmt.Errorf("clock flags: %w", err)
	}
	if (o.RouteConfig == "") != (o.Route == "") {
		return errors.New("--route-config and --route go together: name the file and the route in it")
	}
	if o.Target == "" && o.set["api-key-env"] {
		return errors.New("--api-key-env: the embedded simulator takes no key; give --target to probe a real provider")
	}
	if o.Target != "" && o.set["sim-profile"] {
		return errors.New("--sim-profile: applies only to the embedded simulator (no --target)")
	}
	if o.Target != "" {
		if err := checkTarget(o.Target); err != nil {
			return err
		}
	}
	if !render.ValidFormat(o.Format) || o.Format == "html" {
		return fmt.Errorf("--format %q: want table, markdown or json (use --html FILE for HTML)", o.Format)
	}
	if o.Shard != "" {
		if _, err := shard.ParseShard(o.Shard); err != nil {
			return fmt.Errorf("--shard: %w", err)
		}
	}
	for _, h := range o.Headers {
		if _, _, err := parseHeader(h); err != nil {
			return err
		}
	}
	for _, e := range o.FailOn {
		if _, err := gate.ParseExpr(e); err != nil {
			return fmt.Errorf("--fail-on: %w", err)
		}
	}
	if o.Resume != "" && o.Mode == probe.ModeStream {
		return errors.New("--resume: resumes a batch job; use it with --mode batch")
	}
	return nil
}

// checkTarget refuses a target that is not an absolute http(s) URL.
func checkTarget(target string) error {
	u, err := url.Parse(target)
	if err != nil {
		return fmt.Errorf("--target %q: %w", redactURL(target), err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--target %q: want an absolute http:// or https:// base URL, such as https://api.openai.com/v1", redactURL(target))
	}
	if u.User != nil {
		return errors.New("--target: credentials in the URL are refused; use --api-key-env or -H")
	}
	return nil
}

// parseHeader reads 'Name: value'.
func parseHeader(h string) (string, string, error) {
	name, value, ok := strings.Cut(h, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.ContainsAny(name, " \t") {
		return "", "", fmt.Errorf("-H %q: want 'Name: value'", redactHeader(h))
	}
	return name, strings.TrimSpace(value), nil
}

// isLoopback reports whether host (without port) is a loopback address.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// envKey reads the API key from the named variable.
func envKey(name string) (string, error) {
	if name == "" {
		return "", nil
	}
	v, ok := os.LookupEnv(name)
	if !ok || v == "" {
		return "", fmt.Errorf("--api-key-env %s: the variable is not set or empty", name)
	}
	return v, nil
}
