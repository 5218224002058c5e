package sim

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// discard is a ResponseWriter that drops the body, so BenchmarkServe
// measures what the simulator spends, not a client's reads.
type discard struct {
	h     http.Header
	n     int
	count bool
	body  bytes.Buffer
}

func (d *discard) Header() http.Header { return d.h }
func (d *discard) WriteHeader(int)     {}
func (d *discard) Flush()              {}
func (d *discard) Write(p []byte) (int, error) {
	d.n += len(p)
	if d.count {
		d.body.Write(p)
	}
	return len(p), nil
}

// BenchmarkServe measures the events per second one core of the simulator
// renders and writes: the zero-delay profile (fast's shape, no waits, 32
// tokens an answer) served to a writer that drops the bytes. Later probe
// benchmarks compare against it to show the simulator was not the
// bottleneck.
func BenchmarkServe(b *testing.B) {
	for _, tc := range []struct{ api, path, body string }{
		{APIAnthropic, "/v1/messages", anthropicStream},
		{APIOpenAI, "/v1/chat/completions", chatStream},
		{APIResponses, "/v1/responses", responsesStream},
	} {
		b.Run(tc.api, func(b *testing.B) {
			s, err := New(Config{Profile: zeroDelay()})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			req := httptest.NewRequestWithContext(context.Background(), http.MethodPost, tc.path, strings.NewReader(tc.body))
			probe := &discard{h: http.Header{}, count: true}
			s.ServeHTTP(probe, req)
			events := bytes.Count(probe.body.Bytes(), []byte("\n\n"))
			if events < 32 {
				b.Fatalf("%d events in %q", events, probe.body.Bytes())
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				r := httptest.NewRequestWithContext(context.Background(), http.MethodPost, tc.path, strings.NewReader(tc.body))
				s.ServeHTTP(&discard{h: http.Header{}}, r)
			}
			b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkServeLoopback is BenchmarkServe through a real loopback HTTP
// server and client in the same process: net/http's chunked writes and
// the client's reads are counted too, so it is a floor on what the
// simulator serves (with -cpu 1, server and client share the one core).
func BenchmarkServeLoopback(b *testing.B) {
	s, err := New(Config{Profile: zeroDelay()})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	defer s.Close()
	client := ts.Client()
	var events int
	b.ReportAllocs()
	for b.Loop() {
		resp, err := client.Post(ts.URL+"/v1/messages", "application/json", strings.NewReader(anthropicStream))
		if err != nil {
			b.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			b.Fatal(err)
		}
		events += bytes.Count(body, []byte("\n\n"))
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}
