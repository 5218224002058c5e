//go:build unix

package sse

import (
	"syscall"
	"time"
)

// processCPUTime returns the CPU time (user and system) this process has
// used, all threads and the garbage collector included. On a shared,
// loaded machine wall time per op swings with the neighbours; CPU time is
// what the decoder itself cost.
func processCPUTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
