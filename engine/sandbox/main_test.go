package sandbox

import (
	"os"
	"testing"
)

// TestMain lets this test binary be the keeper the tests start, as tai's
// main does.
func TestMain(m *testing.M) {
	RunKeeperIfAsked()
	os.Exit(m.Run())
}
