-- The W3C traceparent of the request that emitted an event, written only
-- while tracing is on and that request's span is sampled (NULL otherwise):
-- a webhook delivery's span links to it, so a trace tool shows request →
-- event → delivery.
ALTER TABLE events ADD COLUMN trace_context TEXT;
