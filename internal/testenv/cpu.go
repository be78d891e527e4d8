package testenv

import (
	"syscall"
	"time"
)

// ProcessCPU is this process's user and system CPU time so far, or 0 when
// the system does not say. Benchmarks report work per CPU-second from it,
// which is steadier than per wall-second on a machine shared with other
// work.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
