//go:build !linux

package wire

import "time"

// threadCPU is unavailable off Linux; the benchmark reports wall time only.
func threadCPU() (time.Duration, bool) { return 0, false }
