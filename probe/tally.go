package probe

import (
	"time"

	"github.com/tollgate-dev/tollgate/histo"
)

// Tally aggregates Records into per-path counts and histograms. It is used
// by one goroutine (Run's emit is called from one), so recording takes no
// lock; tallies of shards or workers combine with Merge.
type Tally struct {
	// Paths maps PathStream / PathBatch to what was measured on it.
	Paths map[string]*PathTally
	// Lag records how late open-loop calls started against their intended
	// start (µs); empty in a closed loop.
	Lag *histo.Histogram
	// Warmup counts calls excluded from the statistics.
	Warmup int64
}

// PathTally is one path's counts and histograms.
type PathTally struct {
	// Calls counts measured call attempts.
	Calls int64
	// Outcomes counts attempts by outcome class.
	Outcomes map[string]int64
	// Phases counts attempts by outcome class and phase.
	Phases map[string]map[string]int64
	// Metrics holds one histogram per SPEC §4 metric the calls reached.
	Metrics *histo.Set
	// OutputTokens sums output tokens over all calls.
	OutputTokens int64
	// EstimatedTokens counts calls whose tokens were estimated.
	EstimatedTokens int64
}

// NewTally returns an empty Tally.
func NewTally() *Tally {
	return &Tally{Paths: map[string]*PathTally{}, Lag: histo.New()}
}

// Path returns the tally of path p, creating it on first use.
func (t *Tally) Path(p string) *PathTally {
	pt := t.Paths[p]
	if pt == nil {
		pt = &PathTally{Outcomes: map[string]int64{}, Phases: map[string]map[string]int64{}, Metrics: histo.NewSet()}
		t.Paths[p] = pt
	}
	return pt
}

// Add records one call attempt; warmup calls are only counted.
func (t *Tally) Add(r *Record) {
	if r.Warmup {
		t.Warmup++
		return
	}
	if r.Lag > 0 {
		t.Lag.Record(r.Lag)
	}
	pt := t.Path(r.Path)
	pt.Calls++
	pt.Outcomes[r.Outcome]++
	ph := pt.Phases[r.Outcome]
	if ph == nil {
		ph = map[string]int64{}
		pt.Phases[r.Outcome] = ph
	}
	ph[r.Phase]++
	m := pt.Metrics
	if r.HasConnect() {
		m.Record(MetricConnect, r.Connect)
	}
	if r.HasHead() {
		m.Record(MetricHead, r.Head)
	}
	if r.HasFirstByte() {
		m.Record(MetricFirstByte, r.FirstByte)
	}
	if r.HasTTFT() {
		m.Record(MetricTTFT, r.TTFT)
	}
	if len(r.Gaps) > 0 {
		recordAll(m.Get(MetricGap), r.Gaps)
		m.Record(MetricMaxGap, r.MaxGap)
	}
	if len(r.ByteGaps) > 0 {
		recordAll(m.Get(MetricByteGap), r.ByteGaps)
		m.Record(MetricMaxByteGap, r.MaxByteGap)
	}
	if r.HasTotal() {
		m.Record(MetricTotal, r.Total)
	}
	if r.OutputTokens >= 0 && r.OK() {
		m.RecordValue(MetricOutputTokens, r.OutputTokens)
		pt.OutputTokens += r.OutputTokens
		if r.TokensEstimated {
			pt.EstimatedTokens++
		}
		if tps := r.TPS(); tps > 0 {
			m.RecordValue(MetricTPS, int64(tps+0.5))
		}
	}
}

func recordAll(h *histo.Histogram, ds []time.Duration) {
	for _, d := range ds {
		h.Record(d)
	}
}

// Merge adds o's counts and histograms into t.
func (t *Tally) Merge(o *Tally) {
	t.Warmup += o.Warmup
	t.Lag.Merge(o.Lag)
	for p, src := range o.Paths {
		dst := t.Path(p)
		dst.Calls += src.Calls
		dst.OutputTokens += src.OutputTokens
		dst.EstimatedTokens += src.EstimatedTokens
		for k, v := range src.Outcomes {
			dst.Outcomes[k] += v
		}
		for k, phases := range src.Phases {
			if dst.Phases[k] == nil {
				dst.Phases[k] = map[string]int64{}
			}
			for ph, v := range phases {
				dst.Phases[k][ph] += v
			}
		}
		dst.Metrics.Merge(src.Metrics)
	}
}
