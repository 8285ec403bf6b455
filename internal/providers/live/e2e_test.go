package live_test

import (
	"testing"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/providers/sim"
)

// TestLive runs the live-mode suites against one payd per engine and
// in-process simulators: each suite uses merchants of its own, so they
// share the server (starting payd is the slow part).
func TestLive(t *testing.T) {
	suites := []struct {
		name string
		run  func(*testing.T, *apptest.Env, *apptest.Sim)
	}{
		{"Flows", testFlows},
		{"Refusals", testRefusals},
		{"HeldCardPage", testHeldCardPage},
		{"Payouts", testPayouts},
		{"TimeoutAfterCharge", testTimeoutAfterCharge},
		{"CallbackTwice", testCallbackTwice},
		{"CallbackBeforeAnswer", testCallbackBeforeAnswer},
		{"CallbackSecurity", testCallbackSecurity},
		{"ServerErrorsUnderLoad", testServerErrorsUnderLoad},
		{"Breaker", testBreaker},
		{"SlowProviderIsolated", testSlowProviderIsolated},
		{"SettlementReconciliation", testSettlementReconciliation},
	}
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		s := apptest.StartSim(t, sim.Config{})
		for _, st := range suites {
			t.Run(st.name, func(t *testing.T) { st.run(t, e, s) })
		}
		if err := ledger.Verify(t.Context(), e.Main.DB); err != nil {
			t.Fatal(err)
		}
	}, liveConfig(t))
}
