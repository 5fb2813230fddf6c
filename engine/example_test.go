package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"tai/engine/tool"
	"tai/vault"
)

// A tool added at run time (as tai.tool does from Lua) dispatches like a
// native one: approval, run, audit, redaction.
func ExampleRegistry_Dispatch() {
	dir, _ := os.MkdirTemp("", "tai-example")
	defer os.RemoveAll(dir)
	store, err := vault.Open(filepath.Join(dir, "vault.db"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	_ = store.SecretSet("api-key", "sk-123456789", nil)

	reg := tool.NewRegistry(store, tool.NewApprover(tool.Auto, nil))
	_ = reg.Add(tool.Tool{
		Name:        "echo",
		Description: "Repeat a text",
		Run: func(_ context.Context, args map[string]any) (tool.Result, error) {
			text, _ := args["text"].(string)
			return tool.TextResult("echo: " + text), nil
		},
	})
	res, err := reg.Dispatch(context.Background(), "echo", map[string]any{"text": "key is sk-123456789"})
	fmt.Println(res.Text(), err)
	res, err = reg.Dispatch(context.Background(), "whisper", nil)
	fmt.Println(res.IsError, err)
	// Output:
	// echo: key is [REDACTED:api-key] <nil>
	// false unknown tool "whisper": it is not registered; list the available tools with tool_search
}
