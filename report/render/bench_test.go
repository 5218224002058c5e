package render

import (
	"io"
	"testing"
)

// BenchmarkWrite measures each format on the sample run (two paths, 56,000
// gaps): the HTML report decodes every histogram and draws six charts.
func BenchmarkWrite(b *testing.B) {
	r := sampleResults(b)
	for _, format := range Formats {
		b.Run(format, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := Write(io.Discard, r, format, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
