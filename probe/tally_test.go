package probe

import (
	"slices"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/histo"
)

// batchRec is a batch attempt; final ones carry the item's outcome.
func batchRec(item string, attempt int, outcome, itemOutcome string, itemTime time.Duration) *Record {
	r := &Record{Path: PathBatch, Item: item, Attempt: attempt, Outcome: outcome, OutputTokens: -1,
		reached: reachedConnect | reachedHead, Head: time.Millisecond}
	if itemOutcome != "" {
		r.Final, r.ItemOutcome, r.ItemTime = true, itemOutcome, itemTime
	}
	return r
}

// TestTallyItems: outcomes are counted per attempt and per item, the item
// and attempts histograms hold only items with an outcome of their own,
// Finish adds the items never started, and Merge adds shards' items.
func TestTallyItems(t *testing.T) {
	tally := NewTally()
	for _, r := range []*Record{
		batchRec("a", 1, "http.429", "", 0),
		batchRec("a", 2, OutcomeOK, OutcomeOK, 3*time.Second),
		batchRec("b", 1, "http.400", "http.400", time.Second),
		// Cut short between attempts: its attempt's outcome, the item canceled.
		batchRec("c", 1, "http.429", OutcomeCanceled, 2*time.Second),
		batchRec("d", 1, OutcomeCanceled, OutcomeCanceled, time.Second),
	} {
		tally.Add(r)
	}
	tally.Finish(Summary{Items: 6, Unprocessed: []string{"c", "d", "e"}})
	pt := tally.Paths[PathBatch]
	if pt.Calls != 5 || pt.Outcomes["http.429"] != 2 || pt.Outcomes[OutcomeOK] != 1 {
		t.Errorf("attempts %d outcomes %v, want 5 attempts, 2 http.429, 1 ok", pt.Calls, pt.Outcomes)
	}
	it := pt.Items
	if it.Total != 5 || it.Done != 1 || it.Failed != 1 || it.Unprocessed != 3 {
		t.Errorf("items %+v, want 1 done + 1 failed + 3 unprocessed = 5", it)
	}
	if it.Outcomes[OutcomeOK] != 1 || it.Outcomes["http.400"] != 1 || it.Outcomes[OutcomeCanceled] != 2 {
		t.Errorf("item outcomes %v, want ok 1, http.400 1, canceled 2", it.Outcomes)
	}
	if !slices.Equal(it.UnprocessedIDs, []string{"c", "d", "e"}) {
		t.Errorf("unprocessed %v, want [c d e]", it.UnprocessedIDs)
	}
	item, attempts := pt.Metrics.Lookup(histo.MetricItem), pt.Metrics.Lookup(histo.MetricAttempts)
	if item.Count() != 2 || attempts.Count() != 2 || attempts.Max() != 2 {
		t.Errorf("item count %d, attempts count %d max %d; want 2 items (a, b), most attempts 2", item.Count(), attempts.Count(), attempts.Max())
	}
	if got := item.QuantileDuration(100); got < 3*time.Second || got > 3*time.Second+3*time.Millisecond {
		t.Errorf("item max %v, want 3s", got)
	}

	other := NewTally()
	other.Add(batchRec("x", 1, OutcomeOK, OutcomeOK, time.Second))
	other.Finish(Summary{Items: 2, Unprocessed: []string{"y"}})
	tally.Merge(other)
	if it := tally.Paths[PathBatch].Items; it.Total != 7 || it.Done != 2 || it.Unprocessed != 4 || it.Outcomes[OutcomeOK] != 2 {
		t.Errorf("merged items %+v, want 7: 2 done, 1 failed, 4 unprocessed", it)
	}
	if tally.Paths[PathStream] != nil {
		t.Error("a batch-only tally has a stream path")
	}
}

// BenchmarkTallyAdd is the cost of tallying one record on Run's single
// emit goroutine: a streamed call with 64 content gaps, and a batch item's
// final attempt.
func BenchmarkTallyAdd(b *testing.B) {
	stream := &Record{Path: PathStream, Outcome: OutcomeOK, OutputTokens: 64,
		reached: reachedConnect | reachedHead | reachedFirstByte | reachedTTFT | reachedTotal,
		Connect: time.Millisecond, Head: 200 * time.Millisecond, FirstByte: 210 * time.Millisecond,
		TTFT: 640 * time.Millisecond, Total: 3 * time.Second, MaxGap: 180 * time.Millisecond, MaxByteGap: 180 * time.Millisecond}
	for i := range 64 {
		stream.Gaps = append(stream.Gaps, time.Duration(20+i)*time.Millisecond)
		stream.ByteGaps = append(stream.ByteGaps, time.Duration(20+i)*time.Millisecond)
	}
	final := batchRec("a", 2, OutcomeOK, OutcomeOK, 8*time.Second)
	final.reached |= reachedFirstByte | reachedTotal
	final.Total = 8 * time.Second
	for _, bc := range []struct {
		name string
		rec  *Record
	}{{"stream", stream}, {"batch_final", final}} {
		b.Run(bc.name, func(b *testing.B) {
			tally := NewTally()
			b.ReportAllocs()
			for b.Loop() {
				tally.Add(bc.rec)
			}
		})
	}
}

// BenchmarkRetryable: the policy runs once per batch attempt.
func BenchmarkRetryable(b *testing.B) {
	recs := []*Record{
		batchRec("a", 1, "http.429", "", 0),
		batchRec("a", 1, OutcomeTransport, "", 0),
		batchRec("a", 1, "timeout.head", "", 0),
		batchRec("a", 1, "http.400", "", 0),
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		for _, r := range recs {
			if Retryable(r) {
				n++
			}
		}
	}
	if n == 0 {
		b.Fatal("nothing retryable")
	}
}
