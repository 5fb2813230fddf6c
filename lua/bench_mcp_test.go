package lua

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	glua "github.com/yuin/gopher-lua"

	"tai/mcp"
)

// serveBenchMCP is the minimal NDJSON MCP server of the benchmarks
// (TAI_LUA_TEST_MCP=bench): initialize, ping, tools/list and an echo tools/call,
// answered with as little work as a real server could do.
func serveBenchMCP() {
	in := bufio.NewReaderSize(os.Stdin, 64*1024)
	out := bufio.NewWriterSize(os.Stdout, 64*1024)
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Arguments struct {
				Text string `json:"text"`
			} `json:"arguments"`
		} `json:"params"`
	}
	var buf []byte
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return
		}
		m.ID, m.Method, m.Params.Arguments.Text = nil, "", ""
		if json.Unmarshal(line, &m) != nil || m.ID == nil {
			continue
		}
		buf = append(buf[:0], `{"jsonrpc":"2.0","id":`...)
		buf = append(buf, m.ID...)
		switch m.Method {
		case "initialize":
			buf = append(buf, `,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"bench","version":"1"}}}`...)
		case "tools/list":
			buf = append(buf, `,"result":{"tools":[{"name":"echo","description":"echoes text","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}]}}`...)
		case "tools/call":
			buf = append(buf, `,"result":{"content":[{"type":"text","text":`...)
			buf = strconv.AppendQuote(buf, m.Params.Arguments.Text)
			buf = append(buf, `}]}}`...)
		case "ping":
			buf = append(buf, `,"result":{}}`...)
		default:
			buf = append(buf, `,"error":{"code":-32601,"message":"method not found"}}`...)
		}
		buf = append(buf, '\n')
		out.Write(buf)
		out.Flush()
	}
}

const benchEcho = "hello, benchmark"

// BenchmarkLuaMCPCall compares sequential echo calls over stdio against one
// minimal server process: a Lua loop of c:call on a vault-backed host
// (conversion and redaction included), the go-sdk client, and the raw
// floor (write one tools/call line, read the answer line). paired runs the
// floor and c:call in alternating blocks and reports their ratio, the
// figure to read on a shared machine; in-process is c:call without the
// pipe, the cost tai itself adds.
func BenchmarkLuaMCPCall(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	server := func() *exec.Cmd {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), "TAI_LUA_TEST_MCP=bench")
		return cmd
	}
	ctx := context.Background()
	// connect is the Lua that opens the c:call loops' session as c.
	connect := fmt.Sprintf(`c = assert(tai.mcp.connect{name = "bench", command = %q, args = {"-test.run=^$"}, env = {TAI_LUA_TEST_MCP = "bench"}})`, exe)

	b.Run("raw-ndjson", func(b *testing.B) {
		raw := rawFloor(b, server())
		cpu := cpuTime()
		for b.Loop() {
			raw(1)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
		reportCPU(b, cpu)
	})

	b.Run("go-sdk", func(b *testing.B) {
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).
			Connect(ctx, &sdk.CommandTransport{Command: server()}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		params := &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": benchEcho}}
		cpu := cpuTime()
		for b.Loop() {
			res, err := cs.CallTool(ctx, params)
			if err != nil || len(res.Content) != 1 {
				b.Fatalf("%v %v", res, err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
		reportCPU(b, cpu)
	})

	// paired runs the raw floor and the c:call loop in alternating blocks
	// of pairBlock calls, each against its own server process, so both
	// see the same machine: on shared or virtual CPUs the cost of waking
	// a process swings 2-3× from one second to the next, which moves the
	// floor far more than anything the client does. It reports both rates
	// and their ratio.
	b.Run("paired", func(b *testing.B) {
		const pairBlock = 100
		raw := rawFloor(b, server())
		h := secretHost(b)
		loop := callLoop(b, h, connect)
		var rawTime, luaTime time.Duration
		b.ResetTimer()
		for done := 0; done < b.N; {
			n := min(pairBlock, b.N-done)
			start := time.Now()
			raw(n)
			mid := time.Now()
			loop(n)
			rawTime += mid.Sub(start)
			luaTime += time.Since(mid)
			done += n
		}
		b.StopTimer()
		if _, err := h.DoString(ctx, `c:close()`, "teardown"); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(b.N)/rawTime.Seconds(), "raw-calls/s")
		b.ReportMetric(float64(b.N)/luaTime.Seconds(), "lua-calls/s")
		b.ReportMetric(rawTime.Seconds()/luaTime.Seconds(), "lua/raw")
	})

	b.Run("lua", func(b *testing.B) {
		h := secretHost(b)
		loop := callLoop(b, h, connect)
		b.ResetTimer()
		cpu := cpuTime()
		loop(b.N)
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
		reportCPU(b, cpu)
		b.StopTimer()
		if _, err := h.DoString(ctx, `c:close()`, "teardown"); err != nil {
			b.Fatal(err)
		}
	})

	// in-process is the c:call loop over a transport that answers in the
	// caller's own Recv: no pipe, no second process, no wake-ups. It is the
	// cost of the Lua binding, the client and redaction alone, which is
	// what the stdio runs add to the raw floor.
	b.Run("in-process", func(b *testing.B) {
		h := secretHost(b)
		store, err := h.Vault()
		if err != nil {
			b.Fatal(err)
		}
		c := mcp.NewClient("bench", &answerAtOnce{q: make(chan *mcp.Message, 4)}, &mcp.ClientOptions{Redact: store.Redact})
		if err := c.Start(ctx); err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		h.L.SetGlobal("c", clientValue(h.L, &mcpHandle{c: c, name: "bench", entry: mcp.Entry{Name: "bench"},
			redact: store.Redact, redactor: storeRedactor(store)}))
		loop := callLoop(b, h, "")
		b.ReportAllocs()
		b.ResetTimer()
		cpu := cpuTime()
		loop(b.N)
		reportCPU(b, cpu)
	})
}

// rawFloor starts server and returns the raw NDJSON floor: n times, write
// one tools/call line and read the answer line, nothing parsed. The
// server stops when the benchmark ends.
func rawFloor(b *testing.B, server *exec.Cmd) func(n int) {
	stdin, err := server.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := server.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := server.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stdin.Close(); server.Wait() })
	r := bufio.NewReader(stdout)
	line := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + benchEcho + `"}}}` + "\n")
	return func(n int) {
		for range n {
			if _, err := stdin.Write(line); err != nil {
				b.Fatal(err)
			}
			if _, err := r.ReadSlice('\n'); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// secretHost is a host on a vault holding a secret, so every c:call
// result is checked against one.
func secretHost(b *testing.B) *testHost {
	h := newHost(b, Options{Vault: openTestVault(b, "pw")}, nil)
	if _, err := h.DoString(context.Background(), `tai.vault.secret_set("bench-token", "not-in-the-echo-1234")`, "setup"); err != nil {
		b.Fatal(err)
	}
	return h
}

// callLoop runs setup (which leaves a session in c, unless c is there
// already) and returns the loop of n c:call echoes.
func callLoop(b *testing.B, h *testHost, setup string) func(n int) {
	fn := mustLoad(b, h, fmt.Sprintf(`%s
		return function(n)
			for _ = 1, n do
				local r, err = c:call("echo", {text = %q})
				if not r then error(err) end
			end
		end`, setup, benchEcho))
	return func(n int) {
		if _, err := h.Call(context.Background(), fn, glua.LNumber(n)); err != nil {
			b.Fatal(err)
		}
	}
}

// answerAtOnce is a transport whose server answers each request before
// Send returns; the answer waits in q for the caller's Recv.
type answerAtOnce struct{ q chan *mcp.Message }

func (a *answerAtOnce) Connect(context.Context) error { return nil }
func (a *answerAtOnce) Close() error                  { return nil }

func (a *answerAtOnce) Send(_ context.Context, m *mcp.Message) error {
	if m.ID == (mcp.ID{}) {
		return nil // a notification
	}
	res := `{}`
	switch m.Method {
	case mcp.MethodInitialize:
		res = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"bench","version":"1"}}`
	case mcp.MethodToolsCall:
		res = `{"content":[{"type":"text","text":"` + benchEcho + `"}]}`
	}
	a.q <- &mcp.Message{ID: m.ID, Result: json.RawMessage(res)}
	return nil
}

func (a *answerAtOnce) Recv(ctx context.Context) (*mcp.Message, error) {
	select {
	case m := <-a.q:
		return m, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
