package wire

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/tollgate-dev/tollgate/probe/sse"
)

// benchStreams are the streams each protocol's benchmark draws its events from.
var benchStreams = map[string][]string{
	"anthropic": {"anthropic/thinking_tool_use.sse", "anthropic/lone_cr.sse"},
	"openai":    {"openai-chat/azure_prompt_filter_crlf.sse", "openai-chat/deepseek_reasoning_bom_keepalive.sse", "openai-chat/openrouter_reasoning.sse"},
	"responses": {"responses/text.sse", "responses/reasoning_function_call.sse"},
}

// contentWeight is how many times each content delta appears in the mix per
// lifecycle event: a few-hundred-token answer is mostly deltas, with a
// dozen lifecycle, ping and usage events around them.
const contentWeight = 20

// benchItems reads the protocol's streams into owned Items, content deltas
// repeated contentWeight times.
func benchItems(b *testing.B, p Protocol) []sse.Item {
	var items []sse.Item
	for _, name := range benchStreams[p.Name()] {
		raw, err := os.ReadFile(filepath.Join(ownStreams, name))
		if err != nil {
			b.Fatal(err)
		}
		for _, own := range readItems(b, raw) {
			n := 1
			if p.Classify(&own).Kind == Content {
				n = contentWeight
			}
			for range n {
				items = append(items, own)
			}
		}
	}
	return items
}

// BenchmarkClassify measures Classify over a realistic mix of each
// protocol's events. The goal is more than 1,000,000 events/s on one core
// with 0 allocs/op.
func BenchmarkClassify(b *testing.B) {
	for _, p := range protocols {
		b.Run(p.Name(), func(b *testing.B) {
			items := benchItems(b, p)
			var bytesTotal int
			for i := range items {
				bytesTotal += len(items[i].Data)
			}
			b.SetBytes(int64(bytesTotal / len(items)))
			b.ReportAllocs()
			// The loop stays on one OS thread so that thread's CPU clock
			// covers all of it: cpu-events/s is the rate one core sustains
			// whatever else the machine runs; events/s is by the wall clock.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu0, cpuOK := threadCPU()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if p.Classify(&items[i%len(items)]).Kind == Invalid {
					b.Fatal("invalid event in the benchmark mix")
				}
			}
			b.StopTimer()
			cpu1, _ := threadCPU()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
			if cpuOK && cpu1 > cpu0 {
				b.ReportMetric(float64(b.N)/(cpu1-cpu0).Seconds(), "cpu-events/s")
			}
		})
	}
}
