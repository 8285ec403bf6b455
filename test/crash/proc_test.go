package crash

import (
	"os"
	"testing"

	"github.com/payd/payd/internal/testutil"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testutil.RemoveSharedPayd()
	os.Exit(code)
}
