//go:build unix

package probe

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/probe/wire"
	"github.com/tollgate-dev/tollgate/sim"
)

// The capacity benchmarks of issue 4: how many concurrent streams the
// engine drives on this machine, how far its TTFT is from the simulator's
// own schedule, what one in-flight stream costs in memory, and whether
// memory stays flat over a million calls. Run them with
//
//	go test -run '^$' -bench Capacity ./probe/
//
// scripts/bench.sh runs them with the sizes docs/benchmarks.md quotes
// (-benchtime 20000x on fast, 4000x on realistic, 1000000x for the million).

// capSeed is the simulator seed of every capacity run; the TTFT error is
// computed by redrawing each call's schedule from (profile, seed, index).
const capSeed = 7

// capMaxTokens is the max_tokens of every capacity call (the CLI default).
const capMaxTokens = 256

// capClocks are the CLI's default clocks with the content clocks on too,
// so that every call runs all seven timers, as the most expensive probe
// does; none fires against a healthy simulator.
var capClocks = Clocks{Connect: 10 * time.Second, Head: time.Minute, HeadBatch: 10 * time.Minute,
	FirstToken: time.Minute, Idle: 2 * time.Minute, Total: 15 * time.Minute, TTFT: time.Minute, Gap: time.Minute}

// capCaller is an Anthropic caller on its own default transport.
func capCaller(b *testing.B) (*Caller, *http.Transport) {
	b.Helper()
	proto, err := wire.Lookup("anthropic")
	if err != nil {
		b.Fatal(err)
	}
	tr := NewTransport()
	c, err := NewCaller(CallerOptions{Protocol: proto, Clocks: capClocks, Client: &http.Client{Transport: tr}})
	if err != nil {
		b.Fatal(err)
	}
	return c, tr
}

// capRun is a closed-loop stream run of n measured calls after warmup
// calls, against base.
func capRun(c *Caller, base string, n, concurrency, warmup int, header http.Header) RunOptions {
	return RunOptions{
		Caller: c,
		Request: wire.Request{BaseURL: base, Model: "m", MaxTokens: capMaxTokens, Header: header,
			Messages: []wire.Message{{Role: "user", Content: "how many streams can one probe drive?"}}},
		Prompts:     []Prompt{{ID: "cap"}},
		Mode:        ModeStream,
		Requests:    n,
		Concurrency: concurrency,
		Warmup:      warmup,
		Seed:        1,
	}
}

// firstWrite is what the witness saw of one request: when the simulator's
// handler started (the origin of its schedule) and when the write that
// carried the first content delta was flushed to the socket.
type firstWrite struct {
	start, content time.Time
}

// witness wraps the simulator's handler to see, on the server's side of
// the socket, when each answer's first content delta actually left, and
// how many streams were open at once. It shares the benchmark's monotonic
// clock, so its instants compare with the engine's Record.Start + TTFT.
type witness struct {
	h      http.Handler
	active atomic.Int64
	peak   atomic.Int64
	mu     sync.Mutex
	seen   map[string]firstWrite // by request id
}

func (wt *witness) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := wt.active.Add(1)
	defer wt.active.Add(-1)
	for p := wt.peak.Load(); n > p && !wt.peak.CompareAndSwap(p, n); p = wt.peak.Load() {
	}
	wt.h.ServeHTTP(&witnessWriter{ResponseWriter: w, f: w.(http.Flusher), wt: wt, start: time.Now()}, r)
}

// firstWrites returns what the witness saw, by request id.
func (wt *witness) firstWrites() map[string]firstWrite {
	wt.mu.Lock()
	defer wt.mu.Unlock()
	return maps.Clone(wt.seen)
}

// witnessWriter stamps the flush that carried the first text delta. The
// simulator flushes through http.ResponseController, which finds Flush
// here (and everything else through Unwrap).
type witnessWriter struct {
	http.ResponseWriter
	f       http.Flusher
	wt      *witness
	start   time.Time
	pending bool // a write since the last flush held the first delta
	done    bool
}

var textDelta = []byte(`"text_delta"`)

func (w *witnessWriter) Write(p []byte) (int, error) {
	if !w.done && bytes.Contains(p, textDelta) {
		w.pending, w.done = true, true
	}
	return w.ResponseWriter.Write(p)
}

func (w *witnessWriter) Flush() {
	w.f.Flush()
	if !w.pending {
		return
	}
	// After the flush: the bytes are in the socket, where the engine's
	// clock can first see them. Stored now, before the client can have
	// read them, so the call's record never comes before its entry.
	fw := firstWrite{start: w.start, content: time.Now()}
	w.pending = false
	id := w.Header().Get("Request-Id")
	w.wt.mu.Lock()
	w.wt.seen[id] = fw
	w.wt.mu.Unlock()
}

func (w *witnessWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// startWitnessedSim serves a simulator with profile prof behind a witness.
func startWitnessedSim(b *testing.B, prof *sim.Profile) (*witness, *httptest.Server) {
	b.Helper()
	srv, err := sim.New(sim.Config{Profile: prof, Seed: capSeed})
	if err != nil {
		b.Fatal(err)
	}
	wt := &witness{h: srv, seen: map[string]firstWrite{}}
	ts := httptest.NewServer(wt)
	b.Cleanup(func() {
		srv.Close()
		ts.Close()
	})
	return wt, ts
}

// simIndex is the simulator's request index, the last 8 hex digits of its
// request ids (req_<hash><index>).
func simIndex(id string) (uint64, error) {
	if len(id) < 8 {
		return 0, fmt.Errorf("request id %q: too short for a simulator id", id)
	}
	v, err := strconv.ParseUint(id[len(id)-8:], 16, 64)
	if err != nil {
		return 0, fmt.Errorf("request id %q: %w", id, err)
	}
	return v, nil
}

// scheduleOf redraws the simulator's schedule of request idx: its source
// is PCG(seed, idx), as in sim.scheduleRNG, and the benchmark checks the
// redraw against what was streamed (the delta count of every call).
func scheduleOf(p *sim.Profile, idx uint64) sim.Schedule {
	return p.Schedule(rand.New(rand.NewPCG(uint64(capSeed), idx)), capMaxTokens)
}

// cpuTime is the user+system CPU time this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// quantile returns the q-quantile (0..1) of sorted ds in milliseconds.
func quantile(ds []time.Duration, q float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	i := min(int(q*float64(len(ds))), len(ds)-1)
	return float64(ds[i]) / float64(time.Millisecond)
}

// BenchmarkCapacityStreams drives the simulator, in this process, with a
// closed loop: one op is one measured call, after a warmup of one call per
// worker (which opens the connections). On the fast profile (streams of
// about 25ms) the loop runs 500 to 4000 workers; on the realistic one
// (streams of seconds, as real ones are) 2000 and 4000, which is what it
// takes to hold that many streams open at once on two cores.
//
// It reports calls/s, content deltas/s, the CPU cores the process used and
// its CPU time per call (engine and simulator together), the peak of
// streams open at the simulator, and the TTFT measurement error against
// the simulator's own schedule:
//
//	ttft-err       = measured TTFT - scheduled TTFT, split into
//	send           = handler start - call start (connect, request write, dispatch)
//	sim-late       = first delta flushed - handler start - scheduled TTFT
//	recv           = engine's TTFT instant - first delta flushed (kernel, read, parse)
//
// recv is the engine's own error; send and sim-late are what a loaded
// 2-core machine adds on both sides of the socket.
func BenchmarkCapacityStreams(b *testing.B) {
	for _, bc := range []struct {
		prof    func() *sim.Profile
		workers []int
	}{
		{sim.Fast, []int{500, 1000, 2000, 4000}},
		{sim.Realistic, []int{2000, 4000}},
	} {
		for _, c := range bc.workers {
			b.Run(fmt.Sprintf("%s/c=%d", bc.prof().Name, c), func(b *testing.B) { benchStreams(b, bc.prof(), c) })
		}
	}
}

func benchStreams(b *testing.B, prof *sim.Profile, concurrency int) {
	if os.Getenv("GOGC") == "" { // as tollgate probe runs
		defer debug.SetGCPercent(debug.SetGCPercent(GCPercent))
	}
	wt, ts := startWitnessedSim(b, prof)
	caller, tr := capCaller(b)
	defer tr.CloseIdleConnections()
	opts := capRun(caller, ts.URL, b.N, concurrency, concurrency, nil)

	var errs, send, late, recv []time.Duration
	var calls, notOK, mismatched, dialed int64
	var recs, all []*Record
	b.ResetTimer()
	began, cpu0 := time.Now(), cpuTime(b)
	err := Run(context.Background(), opts, func(r *Record) {
		calls++
		all = append(all, r)
		if !r.OK() {
			notOK++
		}
		if !r.Warmup {
			recs = append(recs, r)
		}
	})
	elapsed, cpu := time.Since(began), cpuTime(b)-cpu0
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	if notOK > 0 {
		b.Fatalf("%d of %d calls not ok: the benchmark measures healthy streams", notOK, calls)
	}
	seen := wt.firstWrites()
	for _, r := range recs {
		idx, err := simIndex(r.RequestID)
		if err != nil {
			b.Fatal(err)
		}
		sched := scheduleOf(prof, idx)
		if r.Deltas != sched.Tokens {
			mismatched++
			continue
		}
		fw, ok := seen[r.RequestID]
		if !ok || fw.content.IsZero() {
			b.Fatalf("call %s: the witness saw no content delta leave", r.RequestID)
		}
		got := r.Start.Add(r.TTFT)
		if !r.Reused {
			dialed++
		}
		errs = append(errs, r.TTFT-sched.TTFT)
		send = append(send, fw.start.Sub(r.Start))
		late = append(late, fw.content.Sub(fw.start)-sched.TTFT)
		recv = append(recv, got.Sub(fw.content))
	}
	if mismatched > 0 {
		b.Fatalf("%d calls streamed another number of deltas than their redrawn schedule: the redraw no longer matches the simulator", mismatched)
	}
	for _, ds := range [][]time.Duration{errs, send, late, recv} {
		slices.Sort(ds)
	}
	rate, deltaRate := steadyRates(began, all)
	b.ReportMetric(rate, "calls/s")
	b.ReportMetric(deltaRate, "deltas/s")
	b.ReportMetric(cpu.Seconds()/elapsed.Seconds(), "cpu-cores")
	// CPU per call holds still when other processes take the cores; the
	// rates and latencies above do not.
	b.ReportMetric(float64(cpu.Microseconds())/float64(calls), "cpu-us/call")
	b.ReportMetric(float64(wt.peak.Load()), "streams")
	// Measured calls that had to dial: their send includes a TCP connect
	// and the server's accept, not only a request write.
	b.ReportMetric(float64(dialed)/float64(max(len(errs), 1)), "dialed/call")
	b.ReportMetric(quantile(errs, 0.5), "ttft-err-p50-ms")
	b.ReportMetric(quantile(errs, 0.99), "ttft-err-p99-ms")
	b.ReportMetric(quantile(send, 0.99), "send-p99-ms")
	b.ReportMetric(quantile(late, 0.99), "sim-late-p99-ms")
	b.ReportMetric(quantile(recv, 0.5), "recv-p50-ms")
	b.ReportMetric(quantile(recv, 0.99), "recv-p99-ms")
}

// steadyRates are the calls and content deltas per second completed while
// every worker was busy: from the run's start to the last call's start. In
// a closed loop each completion starts the next call at once, so the
// window leaves out only the drain at the end, where the slowest streams
// (seconds, on the realistic profile) finish with the loop winding down.
func steadyRates(began time.Time, recs []*Record) (calls, deltas float64) {
	var last time.Time
	for _, r := range recs {
		if r.Start.After(last) {
			last = r.Start
		}
	}
	window := last.Sub(began).Seconds()
	if window <= 0 {
		return 0, 0
	}
	for _, r := range recs {
		if !r.Start.Add(r.Total).After(last) {
			calls++
			deltas += float64(r.Deltas)
		}
	}
	return calls / window, deltas / window
}

// capServerEnv makes the test binary a capacity server (see
// TestCapacityServerProcess).
const capServerEnv = "TOLLGATE_CAPACITY_SERVER"

// Profiles of the capacity server. holdProfile streams its deltas at once
// (the silent-stall fault then keeps the stream open, sending nothing,
// after half of them); zeroProfile answers at once with 4 deltas.
func holdProfile(deltas int) *sim.Profile {
	zero := sim.Dist{Kind: "constant"}
	return &sim.Profile{Name: "hold", Head: zero, TTFT: zero,
		Gap:          sim.Dist{Kind: "constant", Value: sim.Quantity(20 * time.Microsecond)},
		OutputTokens: sim.Dist{Kind: "constant", Value: sim.Quantity(2 * deltas)}}
}

func zeroProfile() *sim.Profile {
	zero := sim.Dist{Kind: "constant"}
	return &sim.Profile{Name: "zero", Head: zero, TTFT: zero, Gap: zero,
		OutputTokens: sim.Dist{Kind: "constant", Value: 4}}
}

// holdLengths are the stream lengths (content deltas in flight) of
// BenchmarkCapacityMemory, with the number of streams held at once.
var holdLengths = []struct{ deltas, streams int }{{1, 2000}, {128, 2000}, {1024, 1000}, {4096, 250}}

// TestCapacityServerProcess is not a test: it is the simulator process of
// the memory benchmarks, run from this test binary so that its memory is
// not the engine's. Without capServerEnv it skips. It serves one
// simulator per hold length and a zero-delay one, prints their addresses
// on one line, and serves until its stdin closes.
func TestCapacityServerProcess(t *testing.T) {
	if os.Getenv(capServerEnv) == "" {
		t.Skip("the capacity benchmarks' server process; started by BenchmarkCapacityMemory and BenchmarkCapacityMillion")
	}
	var addrs []string
	profs := []*sim.Profile{zeroProfile()}
	for _, h := range holdLengths {
		profs = append(profs, holdProfile(h.deltas))
	}
	for _, p := range profs {
		run, err := sim.Start(context.Background(), sim.Config{Profile: p, Seed: capSeed, StallMax: 10 * time.Minute}, "")
		if err != nil {
			t.Fatal(err)
		}
		defer run.Close()
		addrs = append(addrs, run.BaseURL(sim.APIAnthropic))
	}
	fmt.Println(strings.Join(addrs, " "))
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// startCapServer starts the test binary as the capacity server and
// returns its base URLs: the zero-delay one, then one per holdLengths.
func startCapServer(b *testing.B) []string {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCapacityServerProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), capServerEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatalf("start the capacity server: %v", err)
	}
	b.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatalf("read the capacity server's addresses: %v", err)
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	urls := strings.Fields(line)
	if len(urls) != 1+len(holdLengths) {
		b.Fatalf("capacity server said %q, want %d base URLs", line, 1+len(holdLengths))
	}
	return urls
}

// liveHeap is the heap and stack in use after a full collection.
func liveHeap() uint64 {
	heap, stack := liveMem()
	return heap + stack
}

// liveMem is HeapInuse and StackInuse after a full collection.
func liveMem() (heap, stack uint64) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse, m.StackInuse
}

// countingTransport counts the response heads that arrived and the body
// bytes read, so the benchmark knows when every stream is in flight and
// has stopped receiving.
type countingTransport struct {
	rt    http.RoundTripper
	heads atomic.Int64
	bytes atomic.Int64
}

func (t *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(r)
	if err == nil {
		t.heads.Add(1)
		resp.Body = &countingBody{ReadCloser: resp.Body, n: &t.bytes}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// BenchmarkCapacityMemory holds N streams in flight against a simulator in
// another process, each stopped (silent-stall fault) after a given number
// of content deltas, and reports the engine's heap+stack per in-flight
// stream: (HeapInuse+StackInuse with N in flight - before) / N, after a
// full GC. It also reports the content and byte gaps each call kept
// (Record.Gaps, Record.ByteGaps), which grow with the stream's length.
func BenchmarkCapacityMemory(b *testing.B) {
	urls := startCapServer(b)
	for i, h := range holdLengths {
		b.Run(fmt.Sprintf("deltas=%d/streams=%d", h.deltas, h.streams), func(b *testing.B) {
			for b.Loop() {
				benchHold(b, urls[1+i], h.deltas, h.streams)
			}
		})
	}
}

func benchHold(b *testing.B, base string, deltas, streams int) {
	proto, err := wire.Lookup("anthropic")
	if err != nil {
		b.Fatal(err)
	}
	tr := NewTransport()
	defer tr.CloseIdleConnections()
	ct := &countingTransport{rt: tr}
	caller, err := NewCaller(CallerOptions{Protocol: proto, Clocks: capClocks, Client: &http.Client{Transport: ct}})
	if err != nil {
		b.Fatal(err)
	}
	header := http.Header{sim.FaultHeader: {string(sim.FaultSilentStall)}}
	opts := capRun(caller, base, streams, streams, 0, header)
	opts.Request.MaxTokens = 2 * deltas // the hold profile's answer, uncut
	heap0, stack0 := liveMem()
	goroutines := runtime.NumGoroutine()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var recs []*Record
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, opts, func(r *Record) { recs = append(recs, r) })
	}()
	// Settled: every head is in, and no body byte came for 300ms (the
	// silent stall sends nothing after its deltas).
	deadline := time.Now().Add(2 * time.Minute)
	var last int64 = -1
	for {
		time.Sleep(300 * time.Millisecond)
		n := ct.bytes.Load()
		if ct.heads.Load() == int64(streams) && n == last {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("streams never settled: %d of %d heads, %d bytes", ct.heads.Load(), streams, n)
		}
		last = n
	}
	heap1, stack1 := liveMem()
	goroutines = runtime.NumGoroutine() - goroutines
	if path := os.Getenv(capHeapEnv); path != "" {
		writeHeapProfile(b, path)
	}
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}

	var gaps, byteGaps, gapsCap, byteCap int
	for _, r := range recs {
		if r.Outcome != OutcomeCanceled || r.Deltas != deltas {
			b.Fatalf("call %s: outcome %s after %d deltas, want canceled after %d (held in flight)", r.RequestID, r.Outcome, r.Deltas, deltas)
		}
		gaps += len(r.Gaps)
		byteGaps += len(r.ByteGaps)
		gapsCap += cap(r.Gaps)
		byteCap += cap(r.ByteGaps)
	}
	if len(recs) != streams {
		b.Fatalf("%d records, want %d", len(recs), streams)
	}
	perStream := func(after, before uint64) float64 {
		return (float64(after) - float64(before)) / float64(streams) / 1024
	}
	b.ReportMetric(perStream(heap1+stack1, heap0+stack0), "KiB/stream")
	b.ReportMetric(perStream(heap1, heap0), "heap-KiB/stream")
	b.ReportMetric(perStream(stack1, stack0), "stack-KiB/stream")
	b.ReportMetric(float64(goroutines)/float64(streams), "goroutines/stream")
	b.ReportMetric(float64(gaps)/float64(streams), "gaps/stream")
	b.ReportMetric(float64(byteGaps)/float64(streams), "bytegaps/stream")
	b.ReportMetric(float64(8*(gapsCap+byteCap))/float64(streams)/1024, "gapslices-KiB/stream")
}

// capHeapEnv names a file to which BenchmarkCapacityMemory writes the heap
// profile taken with the streams in flight (go tool pprof -sample_index
// inuse_space FILE says where the bytes per stream go).
const capHeapEnv = "TOLLGATE_CAPACITY_HEAP"

func writeHeapProfile(b *testing.B, path string) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		b.Fatalf("write heap profile %s: %v", path, err)
	}
}

// BenchmarkCapacityMillion runs b.N calls (64 workers) against a
// zero-delay simulator in another process, tallying every record as the
// CLI does, and reports the engine's heap+stack after a full GC at the
// 1,000th call and at the last one (both with the workers' calls in
// flight): Tally's histograms are fixed-size, so nothing should grow per
// call. Use -benchtime 1000000x for the million.
func BenchmarkCapacityMillion(b *testing.B) {
	total := max(b.N, 2000) // the first snapshot is at the 1,000th call
	urls := startCapServer(b)
	caller, tr := capCaller(b)
	defer tr.CloseIdleConnections()
	opts := capRun(caller, urls[0], total, 64, 0, nil)
	tally := NewTally()
	var n int
	var at1k, atEnd uint64
	b.ResetTimer()
	began := time.Now()
	err := Run(context.Background(), opts, func(r *Record) {
		tally.Add(r)
		n++
		switch n {
		case 1000:
			at1k = liveHeap()
		case total:
			atEnd = liveHeap()
		}
	})
	elapsed := time.Since(began)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	if ok := tally.Paths[PathStream].Outcomes[OutcomeOK]; ok != int64(total) {
		b.Fatalf("%d of %d calls ok", ok, total)
	}
	b.ReportMetric(float64(total)/elapsed.Seconds(), "calls/s")
	b.ReportMetric(float64(at1k)/1024, "heap-at-1k-KiB")
	b.ReportMetric(float64(atEnd)/1024, "heap-at-end-KiB")
	b.ReportMetric((float64(atEnd)-float64(at1k))/1024, "growth-KiB")
}
