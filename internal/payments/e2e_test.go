package payments_test

import (
	"testing"

	"github.com/payd/payd/internal/app/apptest"
)

// TestEndToEnd runs the payment intent suites against one real payd per
// engine (starting payd is the slow part of an end-to-end test). Each suite
// works with deltas or a merchant of its own, so they share the server.
func TestEndToEnd(t *testing.T) {
	suites := []struct {
		name string
		run  func(*testing.T, *apptest.Env)
	}{
		{"ScenarioMatrix", testScenarioMatrix},
		{"ScenarioSources", testScenarioSources},
		{"Overrides", testOverrides},
		{"Confirm", testConfirm},
		{"ConfirmCORS", testConfirmCORS},
		{"ConcurrentConfirms", testConcurrentConfirms},
		{"ConcurrentPageSubmits", testConcurrentPageSubmits},
		{"HostedPages", testHostedPages},
		{"CreateRefusesBadInput", testCreateRefusesBadInput},
		{"CreateAccepts", testCreateAccepts},
		{"ListAndIsolation", testListAndIsolation},
		{"LiveMode", testLiveMode},
	}
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		for _, s := range suites {
			t.Run(s.name, func(t *testing.T) { s.run(t, e) })
		}
		verifyLedger(t, e)
	}, fastSandbox)
}
