package cmd

import (
	"fmt"
	"time"

	"github.com/tollgate-dev/tollgate/histo"
	"github.com/tollgate-dev/tollgate/probe"
	"github.com/tollgate-dev/tollgate/report"
)

// simTarget is Run.Target for the embedded simulator: its port changes
// every run, so the URL would make shards of one probe look unrelated.
const simTarget = "embedded-simulator"

// buildResults turns a tally into the results file of SPEC §6.
func buildResults(o *ProbeOptions, in *probeInputs, t *probe.Tally, started, ended time.Time, interrupted bool) (*report.Results, error) {
	res := &report.Results{
		Schema: report.Schema,
		Tool:   report.Tool{Name: "tollgate", Version: Version},
		Run: report.Run{
			Started:     started.UTC(),
			Ended:       ended.UTC(),
			Target:      redactURL(o.Target),
			API:         o.API,
			Model:       in.request.Model,
			Mode:        o.Mode,
			Interrupted: interrupted,
			Load: report.Load{
				Requests: o.Requests, Duration: report.Duration(o.Duration), Concurrency: o.Concurrency,
				Rate: o.Rate, Arrival: o.Arrival, Warmup: o.Warmup, Seed: o.Seed, MaxTokens: o.MaxTokens,
				Shard: in.shard.String(),
			},
			Clocks: report.Clocks{
				Connect: report.Duration(in.clocks.Connect), Head: report.Duration(in.clocks.Head),
				HeadBatch: report.Duration(in.clocks.HeadBatch), FirstToken: report.Duration(in.clocks.FirstToken),
				Idle: report.Duration(in.clocks.Idle), Total: report.Duration(in.clocks.Total),
				TTFT: report.Duration(in.clocks.TTFT), Gap: report.Duration(in.clocks.Gap),
				ItemCeiling: report.Duration(in.clocks.ItemCeiling),
			},
		},
		Paths: map[string]*report.Path{},
	}
	if o.Target == "" {
		res.Run.Target = simTarget
		res.Run.Simulated = true
		res.Run.SimProfile = o.SimProfile
	}
	if o.Rate == 0 && o.Concurrency == 0 {
		res.Run.Load.Concurrency = defaultConcurrency
	}
	if o.Mode == probe.ModeStream && o.Requests == 0 && o.Duration == 0 {
		res.Run.Load.Requests = defaultRequests
	}
	if t.Lag.Count() > 0 {
		m, err := report.Summarize(histo.MetricSchedulerLag, t.Lag)
		if err != nil {
			return nil, err
		}
		res.Run.SchedulerLag = m
	}
	for name, pt := range t.Paths {
		p := &report.Path{Calls: pt.Calls, Outcomes: pt.Outcomes, Phases: pt.Phases, Metrics: map[string]*report.Metric{}}
		if it := pt.Items; it != nil {
			p.Items = &report.Items{Total: it.Total, Done: it.Done, Failed: it.Failed, Unprocessed: it.Unprocessed, Outcomes: it.Outcomes}
		}
		for _, metric := range pt.Metrics.Names() {
			m, err := report.Summarize(metric, pt.Metrics.Lookup(metric))
			if err != nil {
				return nil, fmt.Errorf("results: path %s: %w", name, err)
			}
			p.Metrics[metric] = m
		}
		res.Paths[name] = p
	}
	return res, nil
}
