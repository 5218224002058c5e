package probe

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/sim"
)

// simWitness is the simulator as a target, counting the requests it
// decoded per item (the simulator's own observer hook, independent of
// what the engine reports).
type simWitness struct {
	run  *sim.Running
	mu   sync.Mutex
	seen map[string]int
}

func startSim(t *testing.T, prof *sim.Profile) *simWitness {
	t.Helper()
	w := &simWitness{seen: map[string]int{}}
	run, err := sim.Start(context.Background(), sim.Config{Profile: prof, Seed: 1, Observe: w.observe}, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run.Close() })
	w.run = run
	return w
}

func (w *simWitness) observe(info sim.RequestInfo) {
	var body struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(info.Body, &body); err != nil || len(body.Messages) == 0 {
		return
	}
	w.mu.Lock()
	w.seen[strings.TrimPrefix(body.Messages[0].Content, "item ")]++
	w.mu.Unlock()
}

// take returns the counts so far and starts counting afresh.
func (w *simWitness) take() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.seen
	w.seen = map[string]int{}
	return out
}

// simBatchOptions are batchOptions against the simulator's OpenAI chat
// endpoint. (Its Anthropic 429 also carries the rate-limit reset headers
// of every limit, the next minute, which the wire layer folds into
// RetryAfter: that path would wait a minute, not the retry-after's second.)
func simBatchOptions(t *testing.T, w *simWitness, n, concurrency int) RunOptions {
	opts := batchOptions(t, w.run.BaseURL(sim.APIOpenAI), itemPrompts(n), concurrency)
	opts.Caller = newCaller(t, "openai", generous, nil)
	return opts
}

// TestSimRetryAfter: against the simulator's http-429 fault (retry-after:
// 1), the second attempt starts no sooner than a second after the first,
// attempts stop at Attempts, and the simulator saw exactly that many.
func TestSimRetryAfter(t *testing.T) {
	w := startSim(t, sim.Fast())
	opts := simBatchOptions(t, w, 1, 1)
	opts.Request.Header = http.Header{sim.FaultHeader: {string(sim.FaultHTTP429)}}
	opts.Attempts = 2
	opts.RetryBudget = 5 * time.Second
	byItem, _, _ := runBatch(t, context.Background(), opts)
	recs := byItem["i1"]
	checkAttempts(t, recs, 2, "http.429")
	if recs[0].RetryAfter != time.Second {
		t.Errorf("retry-after read as %v, want 1s", recs[0].RetryAfter)
	}
	if gap := recs[1].Start.Sub(recs[0].Start); gap < time.Second || gap > time.Second+lateMargin {
		t.Errorf("attempt 2 started %v after attempt 1, want within [1s, %v]", gap, time.Second+lateMargin)
	}
	if seen := w.take(); seen["i1"] != 2 {
		t.Errorf("the simulator saw %d requests, want 2", seen["i1"])
	}
}

// TestSimJobDeadlineResume runs a job that cannot finish before its
// deadline against the simulator, then resumes it from the cursor, and
// counts at the simulator: the resumed run asks for exactly the cursor's
// items; an item the first run finished is never asked for again; and the
// only items asked for in both runs are those the deadline canceled in
// flight. None lost, none repeated.
func TestSimJobDeadlineResume(t *testing.T) {
	// About 50ms per call: 16 items on 2 workers need about 400ms.
	slow := sim.Fast()
	slow.Head = sim.Dist{Kind: "constant", Value: sim.Quantity(time.Millisecond)}
	slow.TTFT = sim.Dist{Kind: "constant", Value: sim.Quantity(40 * time.Millisecond)}
	slow.Gap = sim.Dist{Kind: "constant", Value: sim.Quantity(time.Millisecond)}
	slow.OutputTokens = sim.Dist{Kind: "constant", Value: 10}
	w := startSim(t, slow)
	opts := simBatchOptions(t, w, 16, 2)
	opts.JobDeadline = 200 * time.Millisecond

	byItem, tally, sum := runBatch(t, context.Background(), opts)
	first := w.take()
	it := tally.Paths[PathBatch].Items
	if it.Done+it.Failed+it.Unprocessed != 16 || it.Total != 16 {
		t.Fatalf("items %+v: done + failed + unprocessed must be all 16", it)
	}
	if !sum.DeadlineExceeded || len(sum.Unprocessed) == 0 || it.Done == 0 {
		t.Fatalf("summary %+v: want some items done and some unprocessed at the deadline", sum)
	}
	var canceled []string
	for id, recs := range byItem {
		last := recs[len(recs)-1]
		if last.Final && last.ItemOutcome == OutcomeCanceled {
			canceled = append(canceled, id)
		}
	}

	path := filepath.Join(t.TempDir(), "cursor.json")
	if err := WriteCursor(path, NewCursor("", opts.Prompts, sum, opts.Shard)); err != nil {
		t.Fatal(err)
	}
	c, err := ReadCursor(path)
	if err != nil {
		t.Fatal(err)
	}
	all := opts.Prompts
	opts.Prompts, err = FilterPrompts(all, c)
	if err != nil {
		t.Fatal(err)
	}
	opts.JobDeadline = 0
	_, tally2, sum2 := runBatch(t, context.Background(), opts)
	second := w.take()
	if it2 := tally2.Paths[PathBatch].Items; it2.Done != int64(len(sum.Unprocessed)) || len(sum2.Unprocessed) != 0 {
		t.Errorf("resumed run: items %+v, want all %d done", it2, len(sum.Unprocessed))
	}

	var resumed, both []string
	for id := range second {
		resumed = append(resumed, id)
		if second[id] != 1 {
			t.Errorf("resumed run asked for %s %d times, want once", id, second[id])
		}
		if first[id] > 0 {
			both = append(both, id)
		}
	}
	slices.SortFunc(resumed, cmpID)
	if !slices.Equal(resumed, sum.Unprocessed) {
		t.Errorf("resumed run asked the simulator for %v, want exactly the cursor's %v", resumed, sum.Unprocessed)
	}
	slices.SortFunc(both, cmpID)
	slices.SortFunc(canceled, cmpID)
	if !slices.Equal(both, canceled) {
		t.Errorf("asked for in both runs: %v, want exactly the items canceled in flight %v", both, canceled)
	}
	for _, p := range all {
		if first[p.ID]+second[p.ID] == 0 {
			t.Errorf("item %s was never asked for", p.ID)
		}
	}
}
