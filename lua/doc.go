// Package lua is tai's Lua host: the `tai` module (bindings over the vault,
// the engine, the bridge and the MCP client, one file per Lua surface),
// Go⇄Lua value conversion, the module loader that puts the user's files
// before the embedded stdlib, the script runner, the readline binding, and
// a sandbox for code that comes from a model or the network.
//
//	h, err := lua.New(&lua.Options{Version: "1.0", Vault: openVault})
//	if err != nil { ... }
//	defer h.Close()
//	os.Exit(h.Run(ctx, lua.Invocation{Mode: lua.ModeEval, Chunk: `print(tai.version)`}))
//
// A Host owns one gopher-lua state and must be used from one goroutine at a
// time; Interrupt is the one method that may be called from any goroutine.
//
// It imports engine, its sub-packages, mcp and its sub-packages, vault and stdlib; only cmd/tai imports it.
package lua
