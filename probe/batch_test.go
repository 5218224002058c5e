package probe

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/histo"
	"github.com/tollgate-dev/tollgate/probe/wire"
)

// okBody is a complete Anthropic non-streaming answer.
const okBody = `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"hello"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":7}}`

// itemPrompts makes n prompts with IDs i1..in whose text names the item,
// so that a test server can tell which item a request is for.
func itemPrompts(n int) []Prompt {
	ps := make([]Prompt, n)
	for k := range ps {
		id := fmt.Sprintf("i%d", k+1)
		ps[k] = Prompt{ID: id, Messages: []wire.Message{{Role: "user", Content: "item " + id}}}
	}
	return ps
}

// itemServer is a test target that answers each request by its item and
// attempt, and counts what it saw: every request, and the answers it
// completed with a 200 (the calls that succeeded at the server).
type itemServer struct {
	*httptest.Server
	// answer writes the response for the n-th request (1-based) of an item.
	answer func(w http.ResponseWriter, r *http.Request, item string, n int)

	mu   sync.Mutex
	seen map[string]int
	oks  map[string]int
	// inFlight and maxInFlight count concurrent requests by "stream".
	inFlight, maxInFlight map[bool]int
}

func newItemServer(t *testing.T, answer func(w http.ResponseWriter, r *http.Request, item string, n int)) *itemServer {
	s := &itemServer{answer: answer, seen: map[string]int{}, oks: map[string]int{},
		inFlight: map[bool]int{}, maxInFlight: map[bool]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *itemServer) serve(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Stream   bool           `json:"stream"`
		Messages []wire.Message `json:"messages"`
	}
	data, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(data, &body); err != nil || len(body.Messages) == 0 {
		http.Error(w, "bad request body", http.StatusBadRequest)
		return
	}
	item := strings.TrimPrefix(body.Messages[0].Content, "item ")
	s.mu.Lock()
	s.seen[item]++
	n := s.seen[item]
	s.inFlight[body.Stream]++
	s.maxInFlight[body.Stream] = max(s.maxInFlight[body.Stream], s.inFlight[body.Stream])
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight[body.Stream]--
		s.mu.Unlock()
	}()
	if body.Stream {
		r.Header.Set(streamHeader, "1")
	}
	rw := &statusWriter{ResponseWriter: w}
	s.answer(rw, r, item, n)
	if rw.status == http.StatusOK && r.Context().Err() == nil {
		s.mu.Lock()
		s.oks[item]++
		s.mu.Unlock()
	}
}

func (s *itemServer) counts() (seen, oks map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return cloneCounts(s.seen), cloneCounts(s.oks)
}

func cloneCounts(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// statusWriter remembers the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

// answerOK writes a complete answer.
func answerOK(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, okBody)
}

// answerStatus writes an Anthropic error with the given status and headers.
func answerStatus(w http.ResponseWriter, status int, header ...string) {
	for i := 0; i+1 < len(header); i += 2 {
		w.Header().Set(header[i], header[i+1])
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"type":"error","error":{"type":"test_error","message":"status %d"}}`, status)
}

// batchOptions are the options of a closed-loop batch run against srv.
func batchOptions(t *testing.T, srv string, prompts []Prompt, concurrency int) RunOptions {
	return RunOptions{
		Caller:      newCaller(t, "anthropic", generous, nil),
		Request:     request(srv, false),
		Prompts:     prompts,
		Mode:        ModeBatch,
		Concurrency: concurrency,
		Seed:        1,
		// Millisecond backoff keeps tests fast; retry-after still rules.
		BackoffBase: time.Millisecond,
		BackoffMax:  2 * time.Millisecond,
	}
}

// runBatch runs opts and returns the records by item, the tally (Finish
// applied) and the summary.
func runBatch(t *testing.T, ctx context.Context, opts RunOptions) (map[string][]*Record, *Tally, Summary) {
	t.Helper()
	byItem := map[string][]*Record{}
	tally := NewTally()
	sum, err := RunWithSummary(ctx, opts, func(r *Record) {
		byItem[r.Item] = append(byItem[r.Item], r)
		tally.Add(r)
	})
	if err != nil {
		t.Fatal(err)
	}
	tally.Finish(sum)
	return byItem, tally, sum
}

// runAgainst runs a job of n items, with the attempts and retry budget
// given, against a target that always answers status with header.
func runAgainst(t *testing.T, n, attempts int, budget time.Duration, status int, header ...string) (*itemServer, map[string][]*Record, *Tally, Summary) {
	t.Helper()
	srv := newItemServer(t, func(w http.ResponseWriter, r *http.Request, item string, n int) {
		answerStatus(w, status, header...)
	})
	opts := batchOptions(t, srv.URL, itemPrompts(n), 2)
	opts.Attempts = attempts
	opts.RetryBudget = budget
	byItem, tally, sum := runBatch(t, context.Background(), opts)
	return srv, byItem, tally, sum
}

// checkAttempts checks an item's records: attempts numbered 1..n in
// order, only the last Final, with the item outcome given.
func checkAttempts(t *testing.T, recs []*Record, n int, itemOutcome string) {
	t.Helper()
	if len(recs) != n {
		t.Fatalf("%d attempts, want %d", len(recs), n)
	}
	for i, r := range recs {
		if r.Attempt != i+1 || r.Path != PathBatch || r.Final != (i == n-1) {
			t.Errorf("record %d: attempt %d path %s final %v, want attempt %d path batch final %v", i, r.Attempt, r.Path, r.Final, i+1, i == n-1)
		}
	}
	if last := recs[n-1]; last.ItemOutcome != itemOutcome {
		t.Errorf("item outcome %q, want %q", last.ItemOutcome, itemOutcome)
	}
}

// TestBatchHonoursRetryAfter: a 429 with retry-after: 1 makes the next
// attempt start no sooner than one second later, and not much later.
func TestBatchHonoursRetryAfter(t *testing.T) {
	_, byItem, tally, sum := runAgainst(t, 1, 2, 10*time.Second, http.StatusTooManyRequests, "Retry-After", "1")
	recs := byItem["i1"]
	checkAttempts(t, recs, 2, "http.429")
	gap := recs[1].Start.Sub(recs[0].Start)
	if gap < time.Second || gap > time.Second+lateMargin {
		t.Errorf("attempt 2 started %v after attempt 1, want within [1s, %v]", gap, time.Second+lateMargin)
	}
	if recs[1].Waited != time.Second || recs[0].Waited != 0 {
		t.Errorf("waited %v then %v, want 0 then 1s", recs[0].Waited, recs[1].Waited)
	}
	if recs[1].ItemTime < time.Second {
		t.Errorf("item time %v, want at least the 1s wait", recs[1].ItemTime)
	}
	it := tally.Paths[PathBatch].Items
	if it.Total != 1 || it.Failed != 1 || it.Outcomes["http.429"] != 1 || len(sum.Unprocessed) != 0 {
		t.Errorf("items %+v unprocessed %v, want one failed http.429", it, sum.Unprocessed)
	}
	if got := tally.Paths[PathBatch].Outcomes["http.429"]; got != 2 {
		t.Errorf("attempt outcomes http.429 = %d, want 2", got)
	}
	if h := tally.Paths[PathBatch].Metrics.Lookup(histo.MetricAttempts); h == nil || h.Count() != 1 || h.Max() != 2 {
		t.Errorf("attempts histogram %v, want one item with 2 attempts", h)
	}
}

// TestBatchAttemptsStopAtAttempts: a target that is always unavailable
// gets exactly Attempts calls per item.
func TestBatchAttemptsStopAtAttempts(t *testing.T) {
	srv, byItem, tally, _ := runAgainst(t, 3, 4, 0, http.StatusServiceUnavailable)
	seen, _ := srv.counts()
	for _, id := range []string{"i1", "i2", "i3"} {
		checkAttempts(t, byItem[id], 4, "http.503")
		if seen[id] != 4 {
			t.Errorf("server saw %s %d times, want 4", id, seen[id])
		}
	}
	if it := tally.Paths[PathBatch].Items; it.Failed != 3 || it.Total != 3 {
		t.Errorf("items %+v, want 3 failed of 3", it)
	}
}

// TestBatchBudgetStopsRetries: no wait takes an item past its retry
// budget; the item fails with its last attempt's outcome instead.
func TestBatchBudgetStopsRetries(t *testing.T) {
	t.Run("budget shorter than retry-after", func(t *testing.T) {
		began := time.Now()
		_, byItem, _, _ := runAgainst(t, 1, 5, 500*time.Millisecond, http.StatusTooManyRequests, "Retry-After", "1")
		checkAttempts(t, byItem["i1"], 1, "http.429")
		if el := time.Since(began); el >= time.Second {
			t.Errorf("the run took %v: it waited although the budget could not cover the wait", el)
		}
	})
	t.Run("budget used up by waits", func(t *testing.T) {
		// Each retry waits the 30ms the server asks for: three waits fit in
		// 100ms, a fourth would make 120ms.
		_, byItem, _, _ := runAgainst(t, 1, 10, 100*time.Millisecond, http.StatusTooManyRequests, "Retry-After-Ms", "30")
		recs := byItem["i1"]
		checkAttempts(t, recs, 4, "http.429")
		var waited time.Duration
		for _, r := range recs {
			waited += r.Waited
		}
		if waited != 90*time.Millisecond {
			t.Errorf("waited %v in all, want 3 x 30ms", waited)
		}
	})
}

// TestBatchNeverRetriesOtherErrors: a 4xx other than 429, and a 500, get
// one attempt however many are allowed.
func TestBatchNeverRetriesOtherErrors(t *testing.T) {
	statuses := []int{400, 401, 403, 404, 413, 422, 500}
	srv := newItemServer(t, func(w http.ResponseWriter, r *http.Request, item string, n int) {
		var k int
		fmt.Sscanf(item, "i%d", &k)
		answerStatus(w, statuses[k-1])
	})
	opts := batchOptions(t, srv.URL, itemPrompts(len(statuses)), 2)
	opts.Attempts = 5
	byItem, tally, _ := runBatch(t, context.Background(), opts)
	seen, _ := srv.counts()
	for k, st := range statuses {
		id := fmt.Sprintf("i%d", k+1)
		checkAttempts(t, byItem[id], 1, fmt.Sprintf("http.%d", st))
		if seen[id] != 1 {
			t.Errorf("status %d: server saw the item %d times, want 1", st, seen[id])
		}
	}
	if it := tally.Paths[PathBatch].Items; it.Failed != int64(len(statuses)) {
		t.Errorf("items %+v, want all failed", it)
	}
}

// TestBatchRetryThenSucceed: an overloaded first attempt and a good second
// make one done item, with outcomes counted per attempt and per item.
func TestBatchRetryThenSucceed(t *testing.T) {
	srv := newItemServer(t, func(w http.ResponseWriter, r *http.Request, item string, n int) {
		if n == 1 {
			answerStatus(w, 529)
			return
		}
		answerOK(w)
	})
	opts := batchOptions(t, srv.URL, itemPrompts(2), 2)
	byItem, tally, _ := runBatch(t, context.Background(), opts)
	for _, id := range []string{"i1", "i2"} {
		checkAttempts(t, byItem[id], 2, OutcomeOK)
	}
	pt := tally.Paths[PathBatch]
	if pt.Calls != 4 || pt.Outcomes["http.529"] != 2 || pt.Outcomes[OutcomeOK] != 2 {
		t.Errorf("attempts %d outcomes %v, want 4: 2 http.529 and 2 ok", pt.Calls, pt.Outcomes)
	}
	if it := pt.Items; it.Done != 2 || it.Total != 2 || it.Outcomes[OutcomeOK] != 2 || len(it.Outcomes) != 1 {
		t.Errorf("items %+v, want 2 done", it)
	}
	if h := pt.Metrics.Lookup(histo.MetricItem); h == nil || h.Count() != 2 {
		t.Errorf("item histogram %v, want 2 items", h)
	}
}

// TestJobDeadlineAndResume runs a job against a target that stalls from
// the fifth item on, under a job deadline. Every item is accounted for
// (done + failed + unprocessed = all), the deadline ends the run on time,
// and a run resumed from the cursor processes exactly the unprocessed
// items: across both runs the server completes every item but the failed
// one exactly once, and sees the failed one once.
func TestJobDeadlineAndResume(t *testing.T) {
	const deadline = 300 * time.Millisecond
	var mu sync.Mutex
	stall := true
	srv := newItemServer(t, func(w http.ResponseWriter, r *http.Request, item string, n int) {
		mu.Lock()
		stalling := stall
		mu.Unlock()
		switch {
		case item == "i2":
			answerStatus(w, http.StatusBadRequest) // failed, never retried
		case item == "i4" && stalling:
			// A retry-after past the job deadline: the item is cut short.
			answerStatus(w, http.StatusTooManyRequests, "Retry-After", "1")
		case stalling && item != "i1" && item != "i3":
			wait(r, never) // slow: answers only after the deadline
		default:
			answerOK(w)
		}
	})
	prompts := itemPrompts(10)
	opts := batchOptions(t, srv.URL, prompts, 2)
	opts.JobDeadline = deadline

	began := time.Now()
	byItem, tally, sum := runBatch(t, context.Background(), opts)
	elapsed := time.Since(began)
	if elapsed < deadline || elapsed > deadline+lateMargin {
		t.Errorf("the run took %v, want within [%v, %v]", elapsed, deadline, deadline+lateMargin)
	}
	want := []string{"i4", "i5", "i6", "i7", "i8", "i9", "i10"}
	if !slices.Equal(sum.Unprocessed, want) || !sum.DeadlineExceeded || sum.Interrupted || sum.Items != 10 {
		t.Fatalf("summary %+v, want unprocessed %v after the job deadline", sum, want)
	}
	it := tally.Paths[PathBatch].Items
	if it.Done != 2 || it.Failed != 1 || it.Unprocessed != 7 || it.Total != 10 || it.Done+it.Failed+it.Unprocessed != it.Total {
		t.Errorf("items %+v, want 2 done + 1 failed + 7 unprocessed = 10", it)
	}
	if !slices.Equal(it.UnprocessedIDs, want) {
		t.Errorf("tally unprocessed %v, want %v", it.UnprocessedIDs, want)
	}
	// i4 was cut short between attempts, i5 and i6 in flight.
	checkAttempts(t, byItem["i4"], 1, OutcomeCanceled)
	if byItem["i4"][0].Outcome != "http.429" {
		t.Errorf("i4's attempt outcome %q, want http.429 (the attempt's own)", byItem["i4"][0].Outcome)
	}
	for _, id := range []string{"i5", "i6"} {
		checkAttempts(t, byItem[id], 1, OutcomeCanceled)
	}
	for _, id := range want[3:] {
		if len(byItem[id]) != 0 {
			t.Errorf("%s started after the deadline", id)
		}
	}
	if h := tally.Paths[PathBatch].Metrics.Lookup(histo.MetricItem); h == nil || h.Count() != 3 {
		t.Errorf("item histogram %v, want the 3 items with an outcome of their own", h)
	}

	path := filepath.Join(t.TempDir(), "cursor.json")
	if err := WriteCursor(path, NewCursor("items.jsonl", prompts, sum, opts.Shard)); err != nil {
		t.Fatal(err)
	}
	c, err := ReadCursor(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Reason != CursorJobDeadline || !slices.Equal(c.Unprocessed, want) {
		t.Fatalf("cursor reason %q items %v, want job_deadline %v", c.Reason, c.Unprocessed, want)
	}
	resume, err := FilterPrompts(prompts, c)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	stall = false
	mu.Unlock()
	opts.Prompts = resume
	byItem2, tally2, sum2 := runBatch(t, context.Background(), opts)
	if len(sum2.Unprocessed) != 0 || sum2.Items != len(want) {
		t.Errorf("resumed run: summary %+v, want %d items all processed", sum2, len(want))
	}
	if it := tally2.Paths[PathBatch].Items; it.Done != int64(len(want)) || it.Total != int64(len(want)) {
		t.Errorf("resumed run: items %+v, want %d done", it, len(want))
	}
	for _, id := range want {
		checkAttempts(t, byItem2[id], 1, OutcomeOK)
	}

	seen, oks := srv.counts()
	for _, p := range prompts {
		switch {
		case p.ID == "i2":
			if seen[p.ID] != 1 || oks[p.ID] != 0 {
				t.Errorf("failed item i2: seen %d, completed %d; want seen once, never completed", seen[p.ID], oks[p.ID])
			}
		case oks[p.ID] != 1:
			t.Errorf("item %s completed %d times across both runs, want exactly once", p.ID, oks[p.ID])
		}
	}
	for _, id := range want[3:] {
		if seen[id] != 1 {
			t.Errorf("never-started item %s: the server saw it %d times across both runs, want once", id, seen[id])
		}
	}
}

// TestBatchInterrupt: an interrupt (ctx canceled) ends the job like the
// deadline does, and the summary says it was interrupted.
func TestBatchInterrupt(t *testing.T) {
	srv := newItemServer(t, func(w http.ResponseWriter, r *http.Request, item string, n int) {
		if item == "i1" {
			answerOK(w)
			return
		}
		wait(r, never)
	})
	opts := batchOptions(t, srv.URL, itemPrompts(5), 1)
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	_, tally, sum := runBatch(t, ctx, opts)
	want := []string{"i2", "i3", "i4", "i5"}
	if !sum.Interrupted || sum.DeadlineExceeded || !slices.Equal(sum.Unprocessed, want) {
		t.Errorf("summary %+v, want interrupted with %v unprocessed", sum, want)
	}
	if it := tally.Paths[PathBatch].Items; it.Done != 1 || it.Unprocessed != 4 || it.Total != 5 {
		t.Errorf("items %+v, want 1 done + 4 unprocessed", it)
	}
	if c := NewCursor("", opts.Prompts, sum, opts.Shard); c.Reason != CursorInterrupted {
		t.Errorf("cursor reason %q, want interrupted", c.Reason)
	}
}

// TestBatchItemsBounds: every item once, in order; -n takes the first
// items; a shard takes its round-robin share; warmup calls are not items.
func TestBatchItemsBounds(t *testing.T) {
	cases := []struct {
		name   string
		adjust func(*RunOptions)
		items  []string
		warmup int
	}{
		// All items, once each, without -n.
		{"all", func(o *RunOptions) {}, []string{"i1", "i2", "i3", "i4", "i5"}, 0},
		// -n caps the items at the first n.
		{"requests", func(o *RunOptions) { o.Requests = 3 }, []string{"i1", "i2", "i3"}, 0},
		// -n beyond the item count does not cycle.
		{"requests beyond", func(o *RunOptions) { o.Requests = 50 }, []string{"i1", "i2", "i3", "i4", "i5"}, 0},
		// Shard 2/2 owns the even positions.
		{"shard", func(o *RunOptions) { o.Shard.Index, o.Shard.Count = 2, 2 }, []string{"i2", "i4"}, 0},
		// Warmup calls come first and are not items.
		{"warmup", func(o *RunOptions) { o.Warmup = 2 }, []string{"i1", "i2", "i3", "i4", "i5"}, 2},
		// An open loop releases items at the rate, each once.
		{"open loop", func(o *RunOptions) { o.Rate = 200; o.Concurrency = 0 }, []string{"i1", "i2", "i3", "i4", "i5"}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newItemServer(t, func(w http.ResponseWriter, r *http.Request, item string, n int) { answerOK(w) })
			opts := batchOptions(t, srv.URL, itemPrompts(5), 2)
			tc.adjust(&opts)
			var finals []string
			warm := 0
			sum, err := RunWithSummary(context.Background(), opts, func(r *Record) {
				if r.Warmup {
					warm++
					if r.Final {
						t.Error("a warmup call is Final")
					}
					return
				}
				if r.Final {
					finals = append(finals, r.Item)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			slices.SortFunc(finals, cmpID)
			if !slices.Equal(finals, tc.items) || warm != tc.warmup || sum.Items != len(tc.items) || len(sum.Unprocessed) != 0 {
				t.Errorf("items %v warmup %d summary %+v, want %v warmup %d", finals, warm, sum, tc.items, tc.warmup)
			}
		})
	}
}

// cmpID orders item IDs i1 < i2 < ... < i10.
func cmpID(a, b string) int {
	var x, y int
	fmt.Sscanf(a, "i%d", &x)
	fmt.Sscanf(b, "i%d", &y)
	return x - y
}

// TestBatchDurationStopsStarts: -d stops items from starting but lets the
// one in flight finish; the rest are unprocessed.
func TestBatchDurationStopsStarts(t *testing.T) {
	srv := newItemServer(t, func(w http.ResponseWriter, r *http.Request, item string, n int) {
		wait(r, 2*limit)
		answerOK(w)
	})
	opts := batchOptions(t, srv.URL, itemPrompts(5), 1)
	opts.Duration = limit
	_, tally, sum := runBatch(t, context.Background(), opts)
	it := tally.Paths[PathBatch].Items
	if it.Done != 1 || it.Unprocessed != 4 || !slices.Equal(sum.Unprocessed, []string{"i2", "i3", "i4", "i5"}) {
		t.Errorf("items %+v unprocessed %v, want i1 done (it was in flight) and i2..i5 unprocessed", it, sum.Unprocessed)
	}
	if c := NewCursor("", opts.Prompts, sum, opts.Shard); c.Reason != CursorStopped {
		t.Errorf("cursor reason %q, want stopped", c.Reason)
	}
}

// TestModeBoth runs the two paths side by side: the workers are split
// (neither path ever has more calls in flight than its share, and each
// uses its share), every batch item is processed once, and a stream path
// given no bound of its own ends with the job.
func TestModeBoth(t *testing.T) {
	srv := newItemServer(t, func(w http.ResponseWriter, r *http.Request, item string, n int) {
		time.Sleep(20 * time.Millisecond)
		if r.Header.Get(streamHeader) == "" {
			answerOK(w)
			return
		}
		s := newSSE(w)
		s.start()
		s.text("a")
		s.stop(1)
	})
	opts := batchOptions(t, srv.URL, itemPrompts(8), 4)
	opts.Mode = ModeBoth
	var streamCalls, batchFinals int
	var lastStream, jobDone time.Time
	sum, err := RunWithSummary(context.Background(), opts, func(r *Record) {
		switch {
		case r.Path == PathStream:
			streamCalls++
			lastStream = time.Now()
			if !r.OK() {
				t.Errorf("stream call %s: %s", r.Outcome, r.Error)
			}
		case r.Final:
			batchFinals++
			jobDone = time.Now()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	seen, _ := srv.counts()
	srv.mu.Lock()
	maxStream, maxBatch := srv.maxInFlight[true], srv.maxInFlight[false]
	srv.mu.Unlock()
	if maxStream != 2 || maxBatch != 2 {
		t.Errorf("most calls in flight: stream %d, batch %d; want 2 each (4 workers split)", maxStream, maxBatch)
	}
	if batchFinals != 8 || sum.Items != 8 || len(sum.Unprocessed) != 0 {
		t.Errorf("batch items %d summary %+v, want 8 processed", batchFinals, sum)
	}
	for _, p := range opts.Prompts {
		// Stream calls draw prompts too; the batch path sent each item once.
		if seen[p.ID] < 1 {
			t.Errorf("item %s never sent", p.ID)
		}
	}
	if streamCalls == 0 {
		t.Error("no stream calls ran beside the job")
	}
	// The stream path stops starting calls when the job is done; the
	// calls in flight then (20ms each) finish.
	if after := lastStream.Sub(jobDone); after > lateMargin {
		t.Errorf("the last stream call ended %v after the job, want the stream path to end with it", after)
	}

	// With -n, each path takes n: n stream calls and the first n items.
	opts.Requests = 3
	var calls = map[string]int{}
	if err := Run(context.Background(), opts, func(r *Record) {
		if r.Path == PathStream || r.Final {
			calls[r.Path]++
		}
	}); err != nil {
		t.Fatal(err)
	}
	if calls[PathStream] != 3 || calls[PathBatch] != 3 {
		t.Errorf("with -n 3: %v, want 3 stream calls and 3 items", calls)
	}
}

// streamHeader marks, for a test handler, a request that asked to stream.
const streamHeader = "X-Test-Stream"
