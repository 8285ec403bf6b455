//go:build !payd_notracing

package tracing

// load is the tracer in use, nil while tracing is off: one atomic load.
func load() *tracerState { return active.Load() }
