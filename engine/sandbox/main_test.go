package sandbox

import (
	"os"
	"testing"
)

// TestMain lets this test binary be the keeper the tests start, as tai's
// main does.
func TestMain(m *testing.M) {
	RunKeeperIfAsked()
	switch os.Getenv(startProbeEnv) {
	case "helper":
		os.Exit(startProbeHelper())
	case "exit":
		os.Exit(0)
	}
	os.Exit(m.Run())
}
