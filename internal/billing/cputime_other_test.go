//go:build !unix

package billing

import "time"

// processCPU is not measured here.
func processCPU() time.Duration { return 0 }
