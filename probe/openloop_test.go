package probe

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/histo"
)

// stallOnce is a target that answers quickly, except that its stallAt-th
// request freezes the whole server for stall — every request arriving
// meanwhile waits too, as when a provider pauses.
func stallOnce(stallAt int64, stall time.Duration) http.Handler {
	var n atomic.Int64
	var mu sync.RWMutex
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == stallAt {
			mu.Lock()
			time.Sleep(stall)
			mu.Unlock()
		} else {
			mu.RLock()
			mu.RUnlock()
		}
		s := newSSE(w)
		s.start()
		s.text("a")
		s.stop(1)
	})
}

// TestOpenLoopShowsAStallClosedLoopHides: the same stall of the target
// shows in an open loop's tail (calls keep arriving on schedule and queue
// behind it, and their latency counts from the intended start), while a
// closed loop with one worker simply stops sending during the stall and
// its p99 never sees it — coordinated omission.
func TestOpenLoopShowsAStallClosedLoopHides(t *testing.T) {
	const stall = 450 * time.Millisecond
	run := func(opts RunOptions) *PathTally {
		srv := httptest.NewServer(stallOnce(30, stall))
		defer srv.Close()
		opts.Caller = newCaller(t, "anthropic", generous, nil)
		opts.Request = request(srv.URL, true)
		opts.Prompts = BuiltinPrompts()
		opts.Mode = ModeStream
		opts.Requests = 200
		tally := NewTally()
		if err := Run(context.Background(), opts, tally.Add); err != nil {
			t.Fatal(err)
		}
		return tally.Path(PathStream)
	}

	open := run(RunOptions{Rate: 200})
	closed := run(RunOptions{Concurrency: 1})

	openTotal, closedTotal := open.Metrics.Lookup(histo.MetricTotal), closed.Metrics.Lookup(histo.MetricTotal)
	if open.Calls != 200 || closed.Calls != 200 {
		t.Fatalf("calls: open %d closed %d, want 200 each", open.Calls, closed.Calls)
	}
	// Open loop: about 90 calls were due during the stall; the p90 of
	// total carries it (each of them waited up to the stall's end).
	if p := openTotal.QuantileDuration(90); p < stall/3 {
		t.Errorf("open loop p90 total %v: the stall of %v does not show in the tail", p, stall)
	}
	// Closed loop: only the stalled call itself saw it.
	if p := closedTotal.QuantileDuration(99); p >= stall/3 {
		t.Errorf("closed loop p99 total %v: expected the stall to be hidden", p)
	}
	if m := time.Duration(closedTotal.Max()) * time.Microsecond; m < stall {
		t.Errorf("closed loop max %v: the stalled call should still be there, once", m)
	}
	if open.Metrics.Lookup(histo.MetricTotal).Count() != 200 {
		t.Errorf("open loop recorded %d totals", openTotal.Count())
	}
}
