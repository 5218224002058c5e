//go:build !unix

package sse

import "time"

// processCPUTime is not available here; the benchmark then reports wall time only.
func processCPUTime() (time.Duration, bool) {
	return 0, false
}
