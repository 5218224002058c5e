package probe

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/probe/wire"
)

// Timing windows. A clock must fire no earlier than its deadline and
// within lateMargin after it; the margin is wide enough for a loaded
// 2-core CI machine and still far below any deadline a user would set.
const (
	limit      = 60 * time.Millisecond
	lateMargin = 250 * time.Millisecond
	// never is a limit that must not fire in a test.
	never = 5 * time.Second
)

// sseWriter writes Anthropic events to a test response.
type sseWriter struct {
	w http.ResponseWriter
	f http.Flusher
}

func newSSE(w http.ResponseWriter) *sseWriter {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("request-id", "req_test")
	w.WriteHeader(http.StatusOK)
	s := &sseWriter{w: w, f: w.(http.Flusher)}
	s.f.Flush()
	return s
}

func (s *sseWriter) raw(b string) {
	fmt.Fprint(s.w, b)
	s.f.Flush()
}

func (s *sseWriter) event(typ, data string) { s.raw("event: " + typ + "\ndata: " + data + "\n\n") }

func (s *sseWriter) start() {
	s.event("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"usage":{"input_tokens":5,"output_tokens":1}}}`)
	s.event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
}

func (s *sseWriter) ping() { s.event("ping", `{"type": "ping"}`) }

func (s *sseWriter) text(t string) {
	s.event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"`+t+`"}}`)
}

func (s *sseWriter) stop(outputTokens int) {
	s.event("content_block_stop", `{"type":"content_block_stop","index":0}`)
	s.event("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":%d}}`, outputTokens))
	s.event("message_stop", `{"type":"message_stop"}`)
}

// wait blocks until the client goes away or d passes. It reads the request
// body first: only then does the server notice a client that hangs up.
func wait(r *http.Request, d time.Duration) {
	io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-time.After(d):
	}
}

func newCaller(t *testing.T, api string, clocks Clocks, client *http.Client) *Caller {
	t.Helper()
	proto, err := wire.Lookup(api)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewCaller(CallerOptions{Protocol: proto, Clocks: clocks, Client: client})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func request(base string, stream bool) wire.Request {
	return wire.Request{BaseURL: base, Model: "m", MaxTokens: 64, Stream: stream,
		Messages: []wire.Message{{Role: "user", Content: "hi"}}}
}

// generous are clocks that never fire in these tests unless a case lowers one.
var generous = Clocks{Connect: never, Head: never, HeadBatch: never, FirstToken: never, Idle: never, Total: never, TTFT: never, Gap: never}

// TestClocksFireAtTheirDeadline stalls a server in exactly one phase per
// case and checks that the clock of that phase, and no other, ends the call
// no earlier than its deadline and not much later.
func TestClocksFireAtTheirDeadline(t *testing.T) {
	cases := []struct {
		name    string
		stream  bool
		clocks  func(*Clocks)
		handler func(w http.ResponseWriter, r *http.Request)
		outcome string
		phase   string
		// earliest is the least time the call must have run (the deadline
		// measured from the call's start, plus any work the server does first).
		earliest time.Duration
	}{
		{
			// The head never comes: a streaming call's head clock fires.
			name: "head", stream: true,
			clocks:  func(c *Clocks) { c.Head = limit },
			handler: func(w http.ResponseWriter, r *http.Request) { wait(r, never) },
			outcome: "timeout.head", phase: PhaseBeforeHead, earliest: limit,
		},
		{
			// A non-streaming call waits on HeadBatch, not Head.
			name: "head-batch", stream: false,
			clocks:  func(c *Clocks) { c.Head = time.Millisecond; c.HeadBatch = limit },
			handler: func(w http.ResponseWriter, r *http.Request) { wait(r, never) },
			outcome: "timeout.head", phase: PhaseBeforeHead, earliest: limit,
		},
		{
			// Headers arrive, the body never does: first_token (ADR 0016:
			// first BODY byte, not the headers).
			name: "first_token", stream: true,
			clocks: func(c *Clocks) { c.FirstToken = limit },
			handler: func(w http.ResponseWriter, r *http.Request) {
				newSSE(w)
				wait(r, never)
			},
			outcome: "timeout.first_token", phase: PhaseBeforeFirstByte, earliest: limit,
		},
		{
			// Some content, then total silence: idle fires (the gap clock
			// is longer here, so only idle can).
			name: "idle", stream: true,
			clocks: func(c *Clocks) { c.Idle = limit; c.Gap = 2 * limit },
			handler: func(w http.ResponseWriter, r *http.Request) {
				s := newSSE(w)
				s.start()
				s.text("a")
				wait(r, never)
			},
			outcome: "timeout.idle", phase: PhaseMidStream, earliest: limit,
		},
		{
			// Content stops while pings go on every 5 ms: gap fires, idle
			// (shorter, but satisfied by the pings) does not.
			name: "gap", stream: true,
			clocks: func(c *Clocks) { c.Idle = limit * 3 / 4; c.Gap = limit },
			handler: func(w http.ResponseWriter, r *http.Request) {
				s := newSSE(w)
				s.start()
				s.text("a")
				s.text("b")
				pingUntilGone(r, s, 5*time.Millisecond)
			},
			outcome: "timeout.gap", phase: PhaseMidStream, earliest: limit,
		},
		{
			// message_start and pings, never content: ttft fires.
			name: "ttft", stream: true,
			clocks: func(c *Clocks) { c.Idle = limit * 3 / 4; c.TTFT = limit },
			handler: func(w http.ResponseWriter, r *http.Request) {
				s := newSSE(w)
				s.start()
				pingUntilGone(r, s, 5*time.Millisecond)
			},
			outcome: "timeout.ttft", phase: PhaseBeforeContent, earliest: limit,
		},
		{
			// A healthy stream that is simply longer than total.
			name: "total", stream: true,
			clocks: func(c *Clocks) { c.Total = limit; c.Gap = limit; c.Idle = limit },
			handler: func(w http.ResponseWriter, r *http.Request) {
				s := newSSE(w)
				s.start()
				for r.Context().Err() == nil {
					s.text("x")
					wait(r, 5*time.Millisecond)
				}
			},
			outcome: "timeout.total", phase: PhaseMidStream, earliest: limit,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(tc.handler))
			defer srv.Close()
			clocks := generous
			tc.clocks(&clocks)
			c := newCaller(t, "anthropic", clocks, nil)
			start := time.Now()
			rec := c.Call(context.Background(), request(srv.URL, tc.stream), time.Time{})
			elapsed := time.Since(start)
			if rec.Outcome != tc.outcome || rec.Phase != tc.phase {
				t.Fatalf("outcome %s/%s (%s), want %s/%s", rec.Outcome, rec.Phase, rec.Error, tc.outcome, tc.phase)
			}
			if elapsed < tc.earliest {
				t.Errorf("fired after %v, before its deadline %v", elapsed, tc.earliest)
			}
			if elapsed > tc.earliest+lateMargin {
				t.Errorf("fired after %v, more than %v past its deadline %v", elapsed, lateMargin, tc.earliest)
			}
		})
	}
}

// pingUntilGone sends an Anthropic ping every interval until the client
// goes away: bytes that keep a byte-level clock happy and prove nothing.
func pingUntilGone(r *http.Request, s *sseWriter, every time.Duration) {
	for r.Context().Err() == nil {
		s.ping()
		wait(r, every)
	}
}

// TestConnectClockFires runs the connect clock against a dial that never
// completes (a loopback listener cannot be made to hang a handshake).
func TestConnectClockFires(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	tr := NewTransport()
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-release:
			return nil, fmt.Errorf("test over")
		}
	}
	defer tr.CloseIdleConnections()
	clocks := generous
	clocks.Connect = limit
	c := newCaller(t, "openai", clocks, &http.Client{Transport: tr})
	start := time.Now()
	rec := c.Call(context.Background(), request("http://127.0.0.1:9/v1", true), time.Time{})
	elapsed := time.Since(start)
	if rec.Outcome != "timeout.connect" || rec.Phase != PhaseBeforeHead {
		t.Fatalf("outcome %s/%s (%s), want timeout.connect/before_head", rec.Outcome, rec.Phase, rec.Error)
	}
	if elapsed < limit || elapsed > limit+lateMargin {
		t.Errorf("connect fired after %v, want within [%v, %v]", elapsed, limit, limit+lateMargin)
	}
	if rec.HasConnect() {
		t.Error("a call whose connect clock fired reports a connect time")
	}
}

// TestNonStreamingWaitsOnHeadBatch: an answer slower than --head but
// faster than --head-batch succeeds (ADR-0036).
func TestNonStreamingWaitsOnHeadBatch(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wait(r, 2*limit)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"hello"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":7}}`)
	}))
	defer srv.Close()
	clocks := generous
	clocks.Head = limit
	clocks.HeadBatch = 10 * limit
	c := newCaller(t, "anthropic", clocks, nil)
	rec := c.Call(context.Background(), request(srv.URL, false), time.Time{})
	if !rec.OK() {
		t.Fatalf("outcome %s (%s), want ok", rec.Outcome, rec.Error)
	}
	if rec.Head < 2*limit {
		t.Errorf("head %v, want at least the server's %v", rec.Head, 2*limit)
	}
	if rec.OutputTokens != 7 || rec.Path != PathBatch || rec.Phase != PhaseMidStream || rec.HasTTFT() {
		t.Errorf("tokens %d path %s phase %s ttft %v, want 7 batch mid_stream (past its content) and no TTFT",
			rec.OutputTokens, rec.Path, rec.Phase, rec.HasTTFT())
	}
}

// connTracker counts the distinct connections a server saw.
type connTracker struct {
	mu    sync.Mutex
	addrs map[string]int
}

func (ct *connTracker) see(r *http.Request) {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	if ct.addrs == nil {
		ct.addrs = map[string]int{}
	}
	ct.addrs[r.RemoteAddr]++
}

func (ct *connTracker) distinct() int {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	return len(ct.addrs)
}

// TestTimedOutConnectionIsNotReused: after a call times out over HTTP/1,
// the next call dials a new connection; after a healthy call, it reuses.
func TestTimedOutConnectionIsNotReused(t *testing.T) {
	var ct connTracker
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ct.see(r)
		s := newSSE(w)
		s.start()
		if r.Header.Get("X-Stall") != "" {
			wait(r, never)
			return
		}
		s.text("hi")
		s.stop(1)
	}))
	defer srv.Close()
	clocks := generous
	clocks.Idle = limit
	tr := NewTransport()
	defer tr.CloseIdleConnections()
	c := newCaller(t, "anthropic", clocks, &http.Client{Transport: tr})

	ok := c.Call(context.Background(), request(srv.URL, true), time.Time{})
	again := c.Call(context.Background(), request(srv.URL, true), time.Time{})
	if !ok.OK() || !again.OK() || !again.Reused {
		t.Fatalf("healthy calls: %s, %s reused=%v; want ok, ok over the pooled connection", ok.Outcome, again.Outcome, again.Reused)
	}
	stall := request(srv.URL, true)
	stall.Header = http.Header{"X-Stall": {"1"}}
	timedOut := c.Call(context.Background(), stall, time.Time{})
	if timedOut.Outcome != "timeout.idle" {
		t.Fatalf("stalled call: %s, want timeout.idle", timedOut.Outcome)
	}
	after := c.Call(context.Background(), request(srv.URL, true), time.Time{})
	if !after.OK() {
		t.Fatalf("call after the timeout: %s (%s)", after.Outcome, after.Error)
	}
	if after.Reused || ct.distinct() != 2 {
		t.Errorf("after a timeout: reused=%v, connections seen %d; want a fresh second connection", after.Reused, ct.distinct())
	}
}

// TestHTTP2TimeoutResetsOnlyItsStream: over HTTP/2 a timed-out call resets
// its own stream; the calls beside it on the same connection finish, and the
// connection stays in the pool.
func TestHTTP2TimeoutResetsOnlyItsStream(t *testing.T) {
	var ct connTracker
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ct.see(r)
		if r.ProtoMajor != 2 {
			http.Error(w, "want HTTP/2", http.StatusHTTPVersionNotSupported)
			return
		}
		s := newSSE(w)
		s.start()
		if r.Header.Get("X-Stall") != "" {
			s.text("x")
			pingUntilGone(r, s, 10*time.Millisecond)
			return
		}
		for i := 0; i < 10; i++ {
			s.text("x")
			wait(r, 10*time.Millisecond)
		}
		s.stop(10)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()

	tr := NewTransport()
	tr.TLSClientConfig = &tls.Config{RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
	defer tr.CloseIdleConnections()
	// The healthy calls beside the stalled one send a delta every 10 ms; a
	// gap deadline well above that keeps a loaded machine from killing them.
	clocks := generous
	clocks.Gap = 3 * limit
	c := newCaller(t, "anthropic", clocks, &http.Client{Transport: tr})

	// One call first, so that the others share its connection.
	if first := c.Call(context.Background(), request(srv.URL, true), time.Time{}); !first.OK() {
		t.Fatalf("first call: %s (%s)", first.Outcome, first.Error)
	}
	var wg sync.WaitGroup
	recs := make([]*Record, 4)
	for i := range recs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := request(srv.URL, true)
			if i == 0 {
				req.Header = http.Header{"X-Stall": {"1"}}
			}
			recs[i] = c.Call(context.Background(), req, time.Time{})
		}()
	}
	wg.Wait()
	if recs[0].Outcome != "timeout.gap" {
		t.Errorf("stalled call: %s (%s), want timeout.gap", recs[0].Outcome, recs[0].Error)
	}
	for i, r := range recs[1:] {
		if !r.OK() || r.Deltas != 10 {
			t.Errorf("call %d beside the stalled one: %s with %d deltas (%s), want ok with 10", i+1, r.Outcome, r.Deltas, r.Error)
		}
	}
	after := c.Call(context.Background(), request(srv.URL, true), time.Time{})
	if !after.OK() || !after.Reused {
		t.Errorf("call after the timeout: %s reused=%v, want ok over the same connection", after.Outcome, after.Reused)
	}
	if n := ct.distinct(); n != 1 {
		t.Errorf("server saw %d connections, want 1 shared HTTP/2 connection", n)
	}
}

// TestTTFTIsFirstContentNotRoleChunk: on an OpenAI stream the role-only
// first chunk is not content; TTFT waits for the first non-empty content.
func TestTTFTIsFirstContentNotRoleChunk(t *testing.T) {
	const contentDelay = 50 * time.Millisecond
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := newSSE(w)
		s.raw(`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n")
		wait(r, contentDelay)
		s.raw(`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}` + "\n\n")
		s.raw(`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n")
		s.raw(`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}` + "\n\n")
		s.raw("data: [DONE]\n\n")
	}))
	defer srv.Close()
	c := newCaller(t, "openai", generous, nil)
	rec := c.Call(context.Background(), request(srv.URL+"/v1", true), time.Time{})
	if !rec.OK() {
		t.Fatalf("outcome %s (%s)", rec.Outcome, rec.Error)
	}
	if rec.TTFT < contentDelay {
		t.Errorf("ttft %v, want at least %v: the role-only chunk is not content", rec.TTFT, contentDelay)
	}
	if rec.Deltas != 1 || rec.OutputTokens != 1 || rec.TokensEstimated {
		t.Errorf("deltas %d tokens %d estimated %v, want 1, 1 from usage", rec.Deltas, rec.OutputTokens, rec.TokensEstimated)
	}
}

// TestOutcomes checks each non-timeout outcome class and the phase it is
// recorded in.
func TestOutcomes(t *testing.T) {
	cases := []struct {
		name    string
		handler func(w http.ResponseWriter, r *http.Request)
		outcome string
		phase   string
		check   func(t *testing.T, rec *Record)
	}{
		{
			name: "ok with usage and request id",
			handler: func(w http.ResponseWriter, r *http.Request) {
				s := newSSE(w)
				s.start()
				s.ping()
				s.text("a")
				s.text("b")
				s.stop(2)
			},
			outcome: "ok", phase: PhaseMidStream,
			check: func(t *testing.T, rec *Record) {
				if rec.Deltas != 2 || rec.OutputTokens != 2 || rec.RequestID != "req_test" || len(rec.Gaps) != 1 {
					t.Errorf("deltas %d tokens %d id %q gaps %d", rec.Deltas, rec.OutputTokens, rec.RequestID, len(rec.Gaps))
				}
				if !rec.HasTotal() || rec.Total < rec.TTFT {
					t.Errorf("total %v ttft %v", rec.Total, rec.TTFT)
				}
			},
		},
		{
			// 429 with retry-after and the provider's error type.
			name: "http 429",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("retry-after", "2")
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusTooManyRequests)
				fmt.Fprint(w, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`)
			},
			outcome: "http.429", phase: PhaseBeforeFirstByte,
			check: func(t *testing.T, rec *Record) {
				if rec.RetryAfter != 2*time.Second || rec.ErrorType != "rate_limit_error" || rec.Status != 429 {
					t.Errorf("retry-after %v type %q status %d", rec.RetryAfter, rec.ErrorType, rec.Status)
				}
			},
		},
		{
			name: "error event after content",
			handler: func(w http.ResponseWriter, r *http.Request) {
				s := newSSE(w)
				s.start()
				s.text("a")
				s.event("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
			},
			outcome: "stream_error.overloaded_error", phase: PhaseMidStream,
		},
		{
			name: "truncated: body ends without message_stop",
			handler: func(w http.ResponseWriter, r *http.Request) {
				s := newSSE(w)
				s.start()
				s.text("a")
			},
			outcome: "truncated", phase: PhaseMidStream,
		},
		{
			name: "protocol: bad JSON",
			handler: func(w http.ResponseWriter, r *http.Request) {
				s := newSSE(w)
				s.start()
				s.event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"`)
			},
			outcome: "protocol", phase: PhaseBeforeContent,
		},
		{
			name: "protocol: oversized event",
			handler: func(w http.ResponseWriter, r *http.Request) {
				s := newSSE(w)
				s.start()
				s.event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"`+strings.Repeat("a", 2<<20)+`"}}`)
			},
			outcome: "protocol", phase: PhaseBeforeContent,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(tc.handler))
			defer srv.Close()
			c := newCaller(t, "anthropic", generous, nil)
			rec := c.Call(context.Background(), request(srv.URL, true), time.Time{})
			if rec.Outcome != tc.outcome || rec.Phase != tc.phase {
				t.Fatalf("outcome %s/%s (%s), want %s/%s", rec.Outcome, rec.Phase, rec.Error, tc.outcome, tc.phase)
			}
			if tc.check != nil {
				tc.check(t, rec)
			}
		})
	}
}

// TestTransportAndCanceled: a refused connection is transport; a call whose
// context ends is canceled, not a timeout.
func TestTransportAndCanceled(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: connection refused
	c := newCaller(t, "anthropic", generous, nil)
	rec := c.Call(context.Background(), request("http://"+addr, true), time.Time{})
	if rec.Outcome != OutcomeTransport || rec.Phase != PhaseBeforeHead {
		t.Errorf("refused: %s/%s (%s), want transport/before_head", rec.Outcome, rec.Phase, rec.Error)
	}

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := newSSE(w)
		s.start()
		s.text("a")
		wait(r, never)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	rec = c.Call(ctx, request(srv.URL, true), time.Time{})
	if rec.Outcome != OutcomeCanceled || rec.Phase != PhaseMidStream || rec.Deltas != 1 {
		t.Errorf("canceled: %s/%s deltas %d (%s), want canceled/mid_stream with 1", rec.Outcome, rec.Phase, rec.Deltas, rec.Error)
	}
}

// TestOpenLoopCountsFromIntendedStart: a call that started late carries its
// lag, and its TTFT and total include it.
func TestOpenLoopCountsFromIntendedStart(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := newSSE(w)
		s.start()
		s.text("a")
		s.stop(1)
	}))
	defer srv.Close()
	c := newCaller(t, "anthropic", generous, nil)
	const late = 200 * time.Millisecond
	rec := c.Call(context.Background(), request(srv.URL, true), time.Now().Add(-late))
	if !rec.OK() || rec.Lag < late || rec.TTFT < late || rec.Total < late {
		t.Errorf("outcome %s lag %v ttft %v total %v; want all at least %v", rec.Outcome, rec.Lag, rec.TTFT, rec.Total, late)
	}
}
