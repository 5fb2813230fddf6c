package builtin

import (
	"context"
	"os"
	"testing"
	"time"

	"tai/engine/tool"
	"tai/vault/vaulttest"
)

// newShell returns a registry holding the shell tool, in a temporary
// directory, whose approver allows every call.
func newShell(t *testing.T) *tool.Registry {
	t.Helper()
	store := vaulttest.Open(t)
	reg := tool.NewRegistry(store, tool.NewApprover(tool.Yolo, nil))
	sh := Shell{Dir: t.TempDir(), Store: store, Env: func(context.Context) []string { return os.Environ() }}
	if err := reg.Add(sh.Tool()); err != nil {
		t.Fatal(err)
	}
	return reg
}

// dispatch calls the tool name of reg, bounded by 20 s, and fails the
// test on a Go error.
func dispatch(t *testing.T, reg *tool.Registry, name string, args map[string]any) tool.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := reg.Dispatch(ctx, name, args)
	if err != nil {
		t.Fatalf("%s(%v): %v", name, args, err)
	}
	return res
}
