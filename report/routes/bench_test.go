package routes

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkParse reads and checks SPEC §6's example, as check-config and
// probe --route-config do once per invocation.
func BenchmarkParse(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("testdata", "full.golden.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data, "full.golden.yaml"); err != nil {
			b.Fatal(err)
		}
	}
}
