// Package sim is the simulated provider: an http.Handler that speaks the
// Anthropic Messages API, OpenAI Chat Completions and OpenAI Responses,
// streaming and not, with latency drawn from a Profile and faults injected
// per request (header X-Tollgate-Sim-Fault) or at a rate.
//
// It depends on none of tollgate's other packages, so that the engine's
// tests can use it as an independent witness of what was sent.
package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// The APIs the simulator speaks, as named by BaseURL and RequestInfo.API.
const (
	APIAnthropic = "anthropic"
	APIOpenAI    = "openai"
	APIResponses = "responses"
)

// DefaultStallMax is how long a stall lasts when Config.StallMax is 0.
const DefaultStallMax = 3 * time.Minute

// defaultMaxTokens is the cap used when a request gives none.
const defaultMaxTokens = 4096

// Config configures a Server.
type Config struct {
	// Profile is the latency model; nil means Fast().
	Profile *Profile
	// Seed makes every schedule and every fault draw reproducible: request
	// number i (0-based, in arrival order) draws from (Seed, i) only.
	Seed int64
	// Faults injects faults at a rate into calls that ask for none by header.
	// Their rates are stacked: at most one fault per call.
	Faults []FaultRate
	// Replay, when not empty, is a captured SSE stream served to every
	// streaming request instead of a generated answer, spaced by the
	// profile (see replay.go). Non-streaming requests get generated answers.
	Replay []byte
	// StallMax caps every stall; 0 means DefaultStallMax.
	StallMax time.Duration
	// Log, when not nil, gets one line per request when it ends.
	Log io.Writer
	// Observe, when not nil, is called with every decoded request before it
	// is answered. It runs on the request's goroutine, so it may be called
	// from many goroutines at once: guard what it writes and keep it short.
	Observe func(RequestInfo)
}

// RequestInfo is what the simulator decoded from one request.
type RequestInfo struct {
	// Index is the request's number, 0-based, in arrival order.
	Index uint64
	// API is APIAnthropic, APIOpenAI or APIResponses.
	API string
	// Model is the request's model name.
	Model string
	// MaxTokens is the request's cap (max_tokens, max_completion_tokens or
	// max_output_tokens); 0 when it gave none.
	MaxTokens int
	// Stream tells a streaming request.
	Stream bool
	// IncludeUsage is chat's stream_options.include_usage.
	IncludeUsage bool
	// Fault is the fault injected into this call (FaultNone for none).
	Fault Fault
	// Header is the request's header.
	Header http.Header
	// Body is the raw request body.
	Body []byte
}

// Stats counts the requests a Server has answered or is answering.
type Stats struct {
	// Requests is the number of requests on a known endpoint.
	Requests int64
	// ByAPI counts requests per API (APIAnthropic, ...).
	ByAPI map[string]int64
	// ByFault counts requests per injected fault ("" is none).
	ByFault map[Fault]int64
	// Streams counts streaming requests.
	Streams int64
}

// Server is the simulated provider. It is an http.Handler.
type Server struct {
	cfg    Config
	prof   *Profile
	replay []replayEvent
	next   atomic.Uint64
	done   chan struct{}

	// life guards closed so that no handler joins active once Close waits.
	life   sync.Mutex
	closed bool
	active sync.WaitGroup

	mu    sync.Mutex
	stats Stats
	logMu sync.Mutex
}

// New checks cfg and returns a Server.
func New(cfg Config) (*Server, error) {
	if cfg.Profile == nil {
		cfg.Profile = Fast()
	}
	if err := cfg.Profile.Validate(); err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	sum := 0.0
	for _, f := range cfg.Faults {
		if _, err := ParseFault(string(f.Fault)); err != nil {
			return nil, fmt.Errorf("sim: %w", err)
		}
		if f.Rate < 0 || f.Rate > 1 {
			return nil, fmt.Errorf("sim: fault %s: rate must be within 0..1", f)
		}
		sum += f.Rate
	}
	if sum > 1 {
		return nil, fmt.Errorf("sim: fault rates add up to %g, more than 1", sum)
	}
	if cfg.StallMax <= 0 {
		cfg.StallMax = DefaultStallMax
	}
	s := &Server{cfg: cfg, prof: cfg.Profile, done: make(chan struct{})}
	s.stats.ByAPI = map[string]int64{}
	s.stats.ByFault = map[Fault]int64{}
	if len(cfg.Replay) > 0 {
		s.replay = parseReplay(cfg.Replay)
		if len(s.replay) == 0 {
			return nil, errors.New("sim: replay stream has no event")
		}
	}
	return s, nil
}

// Profile returns the profile the server draws from.
func (s *Server) Profile() *Profile { return s.prof }

// Stats returns a snapshot of the request counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.stats
	out.ByAPI = make(map[string]int64, len(s.stats.ByAPI))
	for k, v := range s.stats.ByAPI {
		out.ByAPI[k] = v
	}
	out.ByFault = make(map[Fault]int64, len(s.stats.ByFault))
	for k, v := range s.stats.ByFault {
		out.ByFault[k] = v
	}
	return out
}

// Close ends every stall and every answer in progress (their connections
// are dropped) and waits for their handlers to return. The Server answers
// no request after Close.
func (s *Server) Close() {
	s.life.Lock()
	if !s.closed {
		s.closed = true
		close(s.done)
	}
	s.life.Unlock()
	s.active.Wait()
}

// begin registers a handler with Close; false means the server is closed.
func (s *Server) begin() bool {
	s.life.Lock()
	defer s.life.Unlock()
	if s.closed {
		return false
	}
	s.active.Add(1)
	return true
}

// requestBody holds the request fields the simulator reads.
type requestBody struct {
	Model               string `json:"model"`
	MaxTokens           int    `json:"max_tokens"`
	MaxCompletionTokens int    `json:"max_completion_tokens"`
	MaxOutputTokens     int    `json:"max_output_tokens"`
	Stream              bool   `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// maxBody caps a request body.
const maxBody = 16 << 20

// ServeHTTP answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	var api string
	switch r.URL.Path {
	case "/v1/messages":
		api = APIAnthropic
	case "/v1/chat/completions":
		api = APIOpenAI
	case "/v1/responses":
		api = APIResponses
	default:
		writeError(w, newWire(api, nil), http.StatusNotFound, "not_found_error", fmt.Sprintf("no route for %s", r.URL.Path))
		return
	}
	em := newWire(api, nil)
	if r.Method != http.MethodPost {
		writeError(w, em, http.StatusMethodNotAllowed, "invalid_request_error", "use POST")
		return
	}
	if !s.begin() {
		writeError(w, em, http.StatusServiceUnavailable, "api_error", "the simulator is shutting down")
		return
	}
	defer s.active.Done()
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		return
	}
	var rb requestBody
	if err := json.Unmarshal(body, &rb); err != nil {
		writeError(w, em, http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("request body is not valid JSON: %v", err))
		return
	}
	fault := FaultNone
	idx := s.next.Add(1) - 1
	if name := r.Header.Get(FaultHeader); name != "" {
		f, err := ParseFault(name)
		if err != nil {
			writeError(w, em, http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("%s: %v", FaultHeader, err))
			return
		}
		fault = f
	} else if len(s.cfg.Faults) > 0 {
		fault = pickFault(s.cfg.Faults, faultRNG(s.cfg.Seed, idx).Float64())
	}
	c := &call{
		srv: s, w: w, r: r, start: start, idx: idx, api: api, fault: fault,
		model: rb.Model, stream: rb.Stream, inputTokens: len(body)/4 + 1,
		maxTokens: max(rb.MaxTokens, rb.MaxCompletionTokens, rb.MaxOutputTokens),
	}
	if rb.StreamOptions != nil {
		c.includeUsage = rb.StreamOptions.IncludeUsage
	}
	s.count(c)
	if s.cfg.Observe != nil {
		s.cfg.Observe(RequestInfo{
			Index: idx, API: api, Model: c.model, MaxTokens: c.maxTokens, Stream: c.stream,
			IncludeUsage: c.includeUsage, Fault: fault, Header: r.Header.Clone(), Body: body,
		})
	}
	defer s.logCall(c)
	c.serve()
}

func (s *Server) count(c *call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Requests++
	s.stats.ByAPI[c.api]++
	s.stats.ByFault[c.fault]++
	if c.stream {
		s.stats.Streams++
	}
}

func (s *Server) logCall(c *call) {
	if s.cfg.Log == nil {
		return
	}
	fault := string(c.fault)
	if fault == "" {
		fault = "none"
	}
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.cfg.Log, "%s #%d %s stream=%t model=%q max_tokens=%d fault=%s status=%d tokens=%d took=%s\n",
		c.start.UTC().Format(time.RFC3339Nano), c.idx, c.r.URL.Path, c.stream, c.model, c.maxTokens,
		fault, c.status, c.sentTokens, time.Since(c.start).Round(time.Millisecond))
}

// Running is a Server listening on a loopback address.
type Running struct {
	// Server is the handler being served.
	Server *Server
	// Addr is the address it listens on, host:port.
	Addr string
	srv  *http.Server
	lis  net.Listener
	stop context.CancelFunc
	errc chan error

	closeOnce sync.Once
	serveErr  error
}

// Start serves a new Server with cfg on addr ("127.0.0.1:0" when empty)
// until ctx ends or Close is called.
func Start(ctx context.Context, cfg Config, addr string) (*Running, error) {
	s, err := New(cfg)
	if err != nil {
		return nil, err
	}
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	lis, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("sim: listen on %s: %w", addr, err)
	}
	base, stop := context.WithCancel(context.WithoutCancel(ctx))
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 30 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return base },
	}
	run := &Running{Server: s, Addr: lis.Addr().String(), srv: hs, lis: lis, stop: stop, errc: make(chan error, 1)}
	go func() {
		err := hs.Serve(lis)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		run.errc <- err
	}()
	go func() {
		select {
		case <-ctx.Done():
			run.shutdown()
		case <-base.Done():
		}
	}()
	return run, nil
}

// BaseURL is the base URL of api (APIAnthropic, APIOpenAI or APIResponses)
// as the official SDKs take it: http://ADDR for Anthropic, http://ADDR/v1
// for OpenAI.
func (r *Running) BaseURL(api string) string {
	if api == APIAnthropic {
		return "http://" + r.Addr
	}
	return "http://" + r.Addr + "/v1"
}

// shutdown stops the listener, ends every call in progress and waits for
// their handlers.
func (r *Running) shutdown() {
	r.stop()
	r.Server.Close()
	_ = r.srv.Close()
}

// Close stops serving, drops every open connection and waits until every
// goroutine the Running started has returned. It may be called again.
func (r *Running) Close() error {
	r.closeOnce.Do(func() {
		r.shutdown()
		r.serveErr = <-r.errc
	})
	return r.serveErr
}
