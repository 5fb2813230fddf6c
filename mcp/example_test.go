package mcp

import (
	"context"
	"fmt"
	"os"
	"time"
)

// ExampleConnect runs a stdio server (here this test binary in its fake
// server mode), lists its tools and calls one.
func ExampleConnect() {
	exe, _ := os.Executable()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Connect(ctx, Entry{
		Name:      "demo",
		Transport: TransportStdio,
		Command:   exe,
		Env:       map[string]string{fakeEnv: "default"},
	}, &ClientOptions{Version: "1.0"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	tools, err := c.Tools(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(tools), "tools, the first is", tools[0].Name)

	res, err := c.Call(ctx, "echo", map[string]any{"text": "hello"})
	if err != nil {
		fmt.Println(err) // a protocol failure or a dead server
		return
	}
	fmt.Println(res.Text(), res.IsError)

	res, _ = c.Call(ctx, "fail", nil)
	fmt.Println(res.Text(), res.IsError) // the tool ran and failed: a result
	// Output:
	// 17 tools, the first is echo
	// hello false
	// it failed true
}
