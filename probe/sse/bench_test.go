package sse

import (
	"bytes"
	"io"
	"net/http"
	"runtime"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/packages/ssestream"
)

// benchStreams are the streams every decoder is measured on: a 500-token
// answer in each provider's shape.
var benchStreams = []struct {
	name string
	data []byte
}{
	{"anthropic", anthropicStream(500)},
	{"openai-chat", openAIChatStream(500)},
}

// BenchmarkReader measures this package's Reader against the Anthropic SDK's
// decoder on the same bytes. "reuse" is the steady state of a pooled Reader
// (Reset per stream); "new" pays for a fresh Reader and its 32 KiB buffer on
// every stream; "sdk" is ssestream.NewDecoder. allocs/event counts every
// allocation of the loop, divided by the events read; cpu-ns/op is the
// process's CPU time per pass, steadier than ns/op on a busy machine.
func BenchmarkReader(b *testing.B) {
	for _, s := range benchStreams {
		events := countEvents(b, s.data)
		b.Run(s.name+"/reuse", func(b *testing.B) {
			src := bytes.NewReader(s.data)
			r := NewReader(src, Options{})
			measure(b, s.data, events, func() int {
				src.Reset(s.data)
				r.Reset(src)
				return drain(b, r)
			})
		})
		b.Run(s.name+"/new", func(b *testing.B) {
			src := bytes.NewReader(s.data)
			measure(b, s.data, events, func() int {
				src.Reset(s.data)
				return drain(b, NewReader(src, Options{}))
			})
		})
		b.Run(s.name+"/sdk", func(b *testing.B) {
			src := bytes.NewReader(s.data)
			measure(b, s.data, events, func() int {
				src.Reset(s.data)
				dec := ssestream.NewDecoder(&http.Response{
					Header: http.Header{"Content-Type": {"text/event-stream"}},
					Body:   io.NopCloser(src),
				})
				n := 0
				for dec.Next() {
					n++
				}
				if err := dec.Err(); err != nil {
					b.Fatalf("sdk decoder: %v", err)
				}
				return n
			})
		})
	}
}

// measure runs one pass over the stream per iteration, checks that it saw
// every event, and reports throughput and allocations per event.
func measure(b *testing.B, data []byte, events int, pass func() int) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cpuBefore, cpuOK := processCPUTime()
	b.ResetTimer()
	for b.Loop() {
		if n := pass(); n != events {
			b.Fatalf("read %d events, want %d", n, events)
		}
	}
	b.StopTimer()
	cpuAfter, _ := processCPUTime()
	runtime.ReadMemStats(&after)
	if cpuOK {
		b.ReportMetric(float64(cpuAfter-cpuBefore)/float64(b.N), "cpu-ns/op")
	}
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N*events), "allocs/event")
}

// drain reads r to the end and returns how many events it gave.
func drain(b *testing.B, r *Reader) int {
	n := 0
	for {
		it, err := r.Next()
		if err == io.EOF {
			return n
		}
		if err != nil {
			b.Fatalf("Next: %v", err)
		}
		if it.Kind == KindEvent {
			n++
		}
	}
}

// countEvents returns how many events the stream holds, by this Reader.
func countEvents(b *testing.B, data []byte) int {
	return drain(b, NewReader(bytes.NewReader(data), Options{}))
}
