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
	// Items is the per-item accounting of the batch path (report.Items);
	// nil on the stream path.
	Items *ItemTally
}

// ItemTally counts batch items by their final outcome, as report.Items
// does: Done + Failed + Unprocessed = Total.
type ItemTally struct {
	// Total is every item of the run (after Finish; before it, the items
	// that reached a final attempt).
	Total int64
	// Done counts items whose final outcome is ok.
	Done int64
	// Failed counts items whose final outcome is not ok (and not canceled).
	Failed int64
	// Unprocessed counts items never started or cut short by the job
	// deadline or an interrupt (final outcome canceled).
	Unprocessed int64
	// Outcomes counts items by final outcome (Record.ItemOutcome); items
	// never started have none.
	Outcomes map[string]int64
	// UnprocessedIDs names the unprocessed items in item order (set by
	// Finish; a merged tally lists each source's in turn).
	UnprocessedIDs []string
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
	if r.Final {
		pt.addItem(r)
	}
	if r.HasConnect() {
		m.Record(histo.MetricConnect, r.Connect)
	}
	if r.HasHead() {
		m.Record(histo.MetricHead, r.Head)
	}
	if r.HasFirstByte() {
		m.Record(histo.MetricFirstByte, r.FirstByte)
	}
	if r.HasTTFT() {
		m.Record(histo.MetricTTFT, r.TTFT)
	}
	if len(r.Gaps) > 0 {
		recordAll(m.Get(histo.MetricGap), r.Gaps)
		m.Record(histo.MetricMaxGap, r.MaxGap)
	}
	if len(r.ByteGaps) > 0 {
		recordAll(m.Get(histo.MetricByteGap), r.ByteGaps)
		m.Record(histo.MetricMaxByteGap, r.MaxByteGap)
	}
	if r.HasTotal() {
		m.Record(histo.MetricTotal, r.Total)
	}
	if r.OutputTokens >= 0 && r.OK() {
		m.RecordValue(histo.MetricOutputTokens, r.OutputTokens)
		pt.OutputTokens += r.OutputTokens
		if r.TokensEstimated {
			pt.EstimatedTokens++
		}
		if tps := r.TPS(); tps > 0 {
			m.RecordValue(histo.MetricTPS, int64(tps+0.5))
		}
	}
}

// addItem counts a batch item's final attempt. The item and attempts
// histograms hold items that reached an outcome of their own; an item cut
// short by the job ending says nothing about how long items take.
func (pt *PathTally) addItem(r *Record) {
	it := pt.itemTally()
	it.Total++
	it.Outcomes[r.ItemOutcome]++
	switch r.ItemOutcome {
	case OutcomeOK:
		it.Done++
	case OutcomeCanceled:
		it.Unprocessed++
		return
	default:
		it.Failed++
	}
	pt.Metrics.Record(histo.MetricItem, r.ItemTime)
	pt.Metrics.RecordValue(histo.MetricAttempts, int64(r.Attempt))
}

func (pt *PathTally) itemTally() *ItemTally {
	if pt.Items == nil {
		pt.Items = &ItemTally{Outcomes: map[string]int64{}}
	}
	return pt.Items
}

// Finish completes the batch path's item accounting from the run's
// Summary: the items never started join the unprocessed ones, and
// UnprocessedIDs lists them all in item order. Call it once, after the
// run has returned and every record has been added.
func (t *Tally) Finish(s Summary) {
	if s.Items == 0 && len(s.Unprocessed) == 0 {
		return
	}
	it := t.Path(PathBatch).itemTally()
	it.Unprocessed = int64(len(s.Unprocessed))
	it.UnprocessedIDs = append([]string(nil), s.Unprocessed...)
	it.Total = it.Done + it.Failed + it.Unprocessed
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
		if src.Items != nil {
			it := dst.itemTally()
			it.Total += src.Items.Total
			it.Done += src.Items.Done
			it.Failed += src.Items.Failed
			it.Unprocessed += src.Items.Unprocessed
			for k, v := range src.Items.Outcomes {
				it.Outcomes[k] += v
			}
			it.UnprocessedIDs = append(it.UnprocessedIDs, src.Items.UnprocessedIDs...)
		}
	}
}
