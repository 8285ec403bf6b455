package main

import (
	"context"
	"fmt"
)

func init() {
	register(command{name: "trigger", summary: "send a test event of a type to your webhook endpoints (sandbox)", run: runTrigger})
	describe("trigger", usage{
		synopsis: "[--related-object ID] EVENT_TYPE",
		about: "Asks the sandbox to emit a test event of EVENT_TYPE (payment_intent.succeeded, payout.failed, ...)\n" +
			"for the key's merchant, delivered to its webhook endpoints and event stream like a real one (payd\n" +
			"listen shows it), and prints the event. Test-mode keys only.",
		vars: clientVars,
	})
}

// runTrigger is `payd trigger EVENT_TYPE`: POST /v1/sandbox/webhooks/trigger.
func runTrigger(ctx context.Context, e *env, args []string) error {
	fs := newFlags("trigger")
	related := fs.String("related-object", "", "id of an object of yours the event should name (default: a made-up one)")
	if err := parseFlags(e, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return badUsage(e, fs, "one EVENT_TYPE is required")
	}
	c, err := newAPIClient(e)
	if err != nil {
		return err
	}
	body := map[string]any{"event_type": fs.Arg(0)}
	if *related != "" {
		body["related_object_id"] = *related
	}
	raw, err := c.do(ctx, "POST", "/v1/sandbox/webhooks/trigger", body)
	if err != nil {
		return err
	}
	printJSON(e.stdout, raw)
	fmt.Fprintln(e.stderr, "event sent: your endpoints and `payd listen` receive it as a delivery")
	return nil
}
