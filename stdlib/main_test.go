package stdlib_test

import (
	"os"
	"testing"

	"tai/engine/sandbox"
	"tai/lua"
)

// TestMain lets this test binary be the shell keeper and the Lua sandbox
// that the tools it runs start, as tai's main does.
func TestMain(m *testing.M) {
	sandbox.RunKeeperIfAsked()
	lua.RunSandboxIfAsked()
	os.Exit(m.Run())
}
