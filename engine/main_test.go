package engine

import (
	"os"
	"testing"
)

// TestMain lets this test binary be the shell keeper the shell tests
// start, as tai's main does.
func TestMain(m *testing.M) {
	RunShellKeeperIfAsked()
	os.Exit(m.Run())
}
