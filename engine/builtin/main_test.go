package builtin

import (
	"os"
	"testing"

	"tai/engine/sandbox"
)

// TestMain lets this test binary be the shell keeper the shell tests
// start, as tai's main does.
func TestMain(m *testing.M) {
	sandbox.RunKeeperIfAsked()
	os.Exit(m.Run())
}
