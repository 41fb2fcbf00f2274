//go:build !linux

package load

import "time"

// namedCPU is not measured on this platform: Result.Watched stays nil.
func namedCPU([]string) map[string]time.Duration { return nil }
