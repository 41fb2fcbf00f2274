//go:build !unix

package load

import "time"

// processCPU is not measured on this platform: Result.CPU stays zero.
func processCPU() time.Duration { return 0 }
