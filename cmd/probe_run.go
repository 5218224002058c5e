package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"runtime/debug"
	"time"

	"github.com/tollgate-dev/tollgate/histo"
	"github.com/tollgate-dev/tollgate/probe"
	"github.com/tollgate-dev/tollgate/probe/shard"
	"github.com/tollgate-dev/tollgate/probe/wire"
	"github.com/tollgate-dev/tollgate/report"
	"github.com/tollgate-dev/tollgate/report/gate"
	"github.com/tollgate-dev/tollgate/report/recommend"
	"github.com/tollgate-dev/tollgate/report/render"
	"github.com/tollgate-dev/tollgate/report/routes"
	"github.com/tollgate-dev/tollgate/sim"
)

// simModel is the model name sent to the embedded simulator.
const simModel = "sim-1"

// probeInputs are the options resolved against files and the environment:
// everything is read before the first call, so a bad input sends nothing.
type probeInputs struct {
	prompts  []probe.Prompt
	clocks   probe.Clocks
	request  wire.Request
	proto    wire.Protocol
	shard    shard.Shard
	failOn   []gate.Expr
	baseline *report.Results
	policy   recommend.Policy
	// all is every prompt as loaded; prompts is what this run takes (a
	// resumed run takes the cursor's items only). A cursor names items of all.
	all []probe.Prompt
}

func runProbe(ctx context.Context, o *ProbeOptions) error {
	in, err := o.resolve()
	if err != nil {
		return usageErr(err)
	}

	// The embedded simulator outlives an interrupt of the probe: the calls
	// in flight are canceled by the probe (outcome canceled), not cut by the
	// server going away under them.
	var simulator *sim.Running
	if o.Target == "" {
		profile, err := sim.NamedProfile(o.SimProfile)
		if err != nil {
			return usageErrorf("--sim-profile: %w", err)
		}
		simulator, err = sim.Start(context.WithoutCancel(ctx), sim.Config{Profile: profile, Seed: o.Seed}, "127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("start the embedded simulator: %w", err)
		}
		defer simulator.Close()
		in.request.BaseURL = simulator.BaseURL(o.API)
	}

	sinks, err := openSinks(o)
	if err != nil {
		return usageErr(err)
	}
	defer sinks.close()

	caller, err := probe.NewCaller(probe.CallerOptions{Protocol: in.proto, Clocks: in.clocks})
	if err != nil {
		return usageErr(err)
	}
	runOpts := probe.RunOptions{
		Caller:      caller,
		Request:     in.request,
		Prompts:     in.prompts,
		Mode:        o.Mode,
		Requests:    o.Requests,
		Duration:    o.Duration,
		Concurrency: o.Concurrency,
		Rate:        o.Rate,
		Arrival:     o.Arrival,
		Warmup:      o.Warmup,
		Seed:        o.Seed,
		Shard:       in.shard,
		Attempts:    o.Attempts,
		RetryBudget: o.RetryBudget,
		JobDeadline: o.JobDeadline,
	}
	// A stream run needs a bound; a batch job is bounded by its items.
	if o.Mode == probe.ModeStream && runOpts.Requests == 0 && runOpts.Duration == 0 {
		runOpts.Requests = defaultRequests
	}
	if runOpts.Rate == 0 && runOpts.Concurrency == 0 {
		runOpts.Concurrency = defaultConcurrency
	}

	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(probe.GCPercent))
	}
	tally := probe.NewTally()
	prog := newProgress(o.IO.ErrOut, o.Quiet, progressTotal(runOpts, len(in.prompts)), runOpts.Duration, caller.InFlight)
	started := time.Now()
	prog.start()
	var sinkErr error
	summary, runErr := probe.RunWithSummary(ctx, runOpts, func(rec *probe.Record) {
		tally.Add(rec)
		prog.add(rec)
		if err := sinks.add(rec); err != nil && sinkErr == nil {
			sinkErr = err
		}
	})
	prog.stop()
	ended := time.Now()
	if runErr != nil {
		return usageErr(runErr)
	}
	interrupted := ctx.Err() != nil
	tally.Finish(summary)
	if o.Cursor != "" && o.Mode != probe.ModeStream {
		c := probe.NewCursor(o.PromptsPath, in.all, summary, in.shard)
		if err := probe.WriteCursor(o.Cursor, c); err != nil {
			return fmt.Errorf("--cursor: %w", err)
		}
	}

	res, err := buildResults(o, in, tally, started, ended, interrupted)
	if err != nil {
		return err
	}
	if res.Recommendation, err = recommend.Recommend(res, in.policy); err != nil {
		return fmt.Errorf("recommend: %w", err)
	}
	if err := sinks.finish(tally, ended); err != nil && sinkErr == nil {
		sinkErr = err
	}
	if err := writeOutputs(o, res); err != nil {
		return err
	}
	if err := render.Write(o.IO.Out, res, o.Format, render.Options{Color: isTerminal(o.IO.Out), Width: terminalWidth(o.IO.Out)}); err != nil {
		return fmt.Errorf("write the report: %w", err)
	}
	if sinkErr != nil {
		return sinkErr
	}

	switch {
	case interrupted:
		fmt.Fprintln(o.IO.ErrOut, "tollgate: interrupted: the results of every completed call were written")
		return &ExitError{Code: ExitInterrupted}
	case !reachedTarget(tally):
		return &ExitError{Code: ExitNoMeasure, Err: errors.New("no call reached the target: every call failed before a connection was ready (see the outcomes above)")}
	}
	return judge(o, in, res)
}

// resolve reads every file and variable the options name.
func (o *ProbeOptions) resolve() (*probeInputs, error) {
	in := &probeInputs{clocks: o.Clocks}
	var err error
	if in.proto, err = wire.Lookup(o.API); err != nil {
		return nil, fmt.Errorf("--api: %w", err)
	}
	if o.PromptsPath != "" {
		if in.prompts, err = probe.LoadPrompts(o.PromptsPath); err != nil {
			return nil, fmt.Errorf("--prompts: %w", err)
		}
	} else {
		in.prompts = probe.BuiltinPrompts()
	}
	in.all = in.prompts
	if o.Resume != "" {
		c, err := probe.ReadCursor(o.Resume)
		if err != nil {
			return nil, fmt.Errorf("--resume: %w", err)
		}
		if in.prompts, err = probe.FilterPrompts(in.all, c); err != nil {
			return nil, fmt.Errorf("--resume %s: %w", o.Resume, err)
		}
	}
	if o.RouteConfig != "" {
		if in.clocks, err = o.routeClocks(); err != nil {
			return nil, err
		}
	}
	if o.Shard != "" && o.Resume == "" { // a cursor holds its shard's items already
		if in.shard, err = shard.ParseShard(o.Shard); err != nil {
			return nil, fmt.Errorf("--shard: %w", err)
		}
	}
	for _, e := range o.FailOn {
		x, err := gate.ParseExpr(e)
		if err != nil {
			return nil, fmt.Errorf("--fail-on: %w", err)
		}
		in.failOn = append(in.failOn, x)
	}
	in.policy = recommend.DefaultPolicy()
	if o.Policy != "" {
		if in.policy, err = recommend.LoadPolicy(o.Policy); err != nil {
			return nil, fmt.Errorf("--policy: %w", err)
		}
	}
	if o.Baseline != "" {
		if in.baseline, err = report.LoadFile(o.Baseline); err != nil {
			return nil, fmt.Errorf("--baseline: %w", err)
		}
	}

	key, err := envKey(o.APIKeyEnv)
	if err != nil {
		return nil, err
	}
	header := http.Header{}
	for _, h := range o.Headers {
		name, value, err := parseHeader(h)
		if err != nil {
			return nil, err
		}
		header.Add(name, value)
	}
	if o.Target != "" {
		if err := o.checkPlainHTTP(key, header); err != nil {
			return nil, err
		}
	}
	model := o.Model
	if model == "" {
		if o.Target != "" {
			return nil, errors.New("--model: name the model to call (the provider needs one)")
		}
		model = simModel
	}
	in.request = wire.Request{BaseURL: o.Target, Model: model, MaxTokens: o.MaxTokens, APIKey: key, Header: header}
	return in, nil
}

// checkPlainHTTP refuses to send a credential in clear text to a host that
// is not loopback unless --allow-plain-http says the user means it.
func (o *ProbeOptions) checkPlainHTTP(key string, header http.Header) error {
	u, err := url.Parse(o.Target)
	if err != nil || u.Scheme != "http" || isLoopback(u.Hostname()) || o.AllowPlainHTTP {
		return nil
	}
	credential := key != ""
	for name := range header {
		credential = credential || credentialHeader(name)
	}
	if credential {
		return fmt.Errorf("--target %s: refusing to send a credential over plain HTTP to a host that is not loopback; use https, or --allow-plain-http if the network is yours", redactURL(o.Target))
	}
	return nil
}

// routeClocks takes the clocks of --route from --route-config, and the
// route's batch settings (attempts, retry budget, job deadline) where their
// flags were not given. Flags given on the command line override the
// route's values.
func (o *ProbeOptions) routeClocks() (probe.Clocks, error) {
	cfg, err := routes.Load(o.RouteConfig)
	if err != nil {
		return probe.Clocks{}, fmt.Errorf("--route-config: %w", err)
	}
	r, err := cfg.Route(o.Route)
	if err != nil {
		return probe.Clocks{}, fmt.Errorf("--route: %w", err)
	}
	c := probe.Clocks{
		Connect:     r.Timeouts.Connect,
		Head:        o.Clocks.Head,
		HeadBatch:   r.NonStreaming.Head,
		FirstToken:  r.Timeouts.FirstToken,
		Idle:        r.Timeouts.Idle,
		Total:       r.Timeouts.Total,
		TTFT:        r.Stream.TTFT,
		Gap:         r.Stream.Gap,
		ItemCeiling: r.Batch.ItemCeiling,
	}
	if r.Batch.Attempts > 0 && !o.set["attempts"] {
		o.Attempts = r.Batch.Attempts
	}
	if r.Batch.RetryBudget > 0 && !o.set["retry-budget"] {
		o.RetryBudget = r.Batch.RetryBudget
	}
	if r.Batch.JobDeadline > 0 && !o.set["job-deadline"] {
		o.JobDeadline = r.Batch.JobDeadline
	}
	if c.HeadBatch == 0 {
		c.HeadBatch = o.Clocks.HeadBatch
	}
	given := clockFlags(&o.Clocks)
	for flag, dst := range clockFlags(&c) {
		if o.set[flag] {
			*dst = *given[flag]
		}
	}
	return c, nil
}

// clockFlags maps each clock flag to its field of c.
func clockFlags(c *probe.Clocks) map[string]*time.Duration {
	return map[string]*time.Duration{
		"connect": &c.Connect, "head": &c.Head, "head-batch": &c.HeadBatch, "first-token": &c.FirstToken,
		"idle": &c.Idle, "total": &c.Total, "ttft": &c.TTFT, "gap": &c.Gap,
	}
}

// reachedTarget reports whether any call got a connection.
func reachedTarget(t *probe.Tally) bool {
	for _, p := range t.Paths {
		if p.Metrics.Lookup(histo.MetricConnect) != nil && p.Metrics.Lookup(histo.MetricConnect).Count() > 0 {
			return true
		}
	}
	return false
}

// writeOutputs writes the results file and the HTML report.
func writeOutputs(o *ProbeOptions, res *report.Results) error {
	if o.Out != "" {
		if err := report.SaveFile(o.Out, res); err != nil {
			return fmt.Errorf("-o: %w", err)
		}
	}
	if o.ConfigOut != "" {
		cfg := recommend.ToRoutes(res.Recommendation, "default")
		if err := writeFileWith(o.ConfigOut, func(w io.Writer) error { return routes.Write(w, cfg) }); err != nil {
			return fmt.Errorf("--config-out: %w", err)
		}
	}
	if o.HTML != "" {
		if err := writeFileWith(o.HTML, func(w io.Writer) error { return render.Write(w, res, "html", render.Options{}) }); err != nil {
			return fmt.Errorf("--html: %w", err)
		}
	}
	return nil
}

// writeFileWith writes a file through fn, reporting close errors too.
func writeFileWith(path string, fn func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := fn(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// judge applies --fail-on and --baseline: exit 1 on a breach.
func judge(o *ProbeOptions, in *probeInputs, res *report.Results) error {
	failed := false
	if len(in.failOn) > 0 {
		verdicts := gate.Evaluate(res, in.failOn)
		for _, v := range verdicts {
			mark := "pass"
			if v.Failed {
				mark = "FAIL"
			}
			fmt.Fprintf(o.IO.ErrOut, "gate %s: %s\n", mark, v.Message)
		}
		failed = gate.AnyFailed(verdicts)
	}
	if in.baseline != nil {
		cmp, err := gate.Compare(in.baseline, res, gate.CompareOptions{MaxRegression: o.MaxRegression, BaseLabel: o.Baseline, NewLabel: "this run"})
		if err != nil {
			return usageErrorf("--baseline: %w", err)
		}
		for _, r := range cmp.Rows {
			if r.Status.Breach() {
				fmt.Fprintf(o.IO.ErrOut, "regression against %s: %s.%s.%s %.4g -> %.4g %s (%+.1f%%) %s\n",
					o.Baseline, r.Path, r.Metric, r.Stat, r.Base, r.New, r.Unit, r.ChangePct, r.Note)
			}
		}
		failed = failed || cmp.Breached
	}
	if failed {
		return &ExitError{Code: ExitGateFailed, Err: errors.New("a gate failed")}
	}
	return nil
}

// progressTotal is the number of calls the progress bar counts toward: the
// requests, or on a batch job its items (retries make it a lower bound).
func progressTotal(o probe.RunOptions, prompts int) int {
	if o.Mode == probe.ModeBatch {
		items := o.Shard.Items(prompts)
		if o.Requests > 0 {
			items = min(items, o.Requests)
		}
		return items
	}
	return o.Requests
}
