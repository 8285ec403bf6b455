//go:build race

package abuse_test

import "time"

// Under the race detector a hostile request may take several times longer
// (see requestPatience): at load 15-20 a 277 KB body of unknown keys, then
// decoded whole by a CPU-starved process, met the 15 s bound while nothing in
// payd waited on anything but the CPU and SQLite's writer.
func init() { requestPatience = 60 * time.Second }
