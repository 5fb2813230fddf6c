package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// runBenchServer is the minimal NDJSON MCP server of the benchmarks
// (TAI_MCP_FAKE=bench): initialize, ping and an echo tools/call, parsed and
// answered with as little work as a real server could do.
func runBenchServer() int {
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
			return 0
		}
		m.ID, m.Method, m.Params.Arguments.Text = nil, "", ""
		if json.Unmarshal(line, &m) != nil || m.ID == nil {
			continue // notifications need no answer
		}
		buf = append(buf[:0], `{"jsonrpc":"2.0","id":`...)
		buf = append(buf, m.ID...)
		switch m.Method {
		case "initialize":
			buf = append(buf, `,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"bench","version":"1"}}}`...)
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

const benchText = "hello, benchmark"

// BenchmarkStdioRoundTrip compares sequential tools/call echo round trips
// over stdio against one minimal server process: tai's Client, the go-sdk
// client, and the raw floor (write one tools/call line, read the answer
// line, no client logic at all).
func BenchmarkStdioRoundTrip(b *testing.B) {
	ctx := context.Background()

	b.Run("raw-ndjson", func(b *testing.B) {
		e := fakeEntry(b, "bench")
		cmd := exec.Command(e.Command, e.Args...)
		cmd.Env = mergeEnv(os.Environ(), e.Env)
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		defer func() { stdin.Close(); cmd.Wait() }()
		r := bufio.NewReader(stdout)
		line := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + benchText + `"}}}` + "\n")
		b.ResetTimer()
		for b.Loop() {
			if _, err := stdin.Write(line); err != nil {
				b.Fatal(err)
			}
			if _, err := r.ReadSlice('\n'); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
	})

	b.Run("tai", func(b *testing.B) {
		c := connectFake(b, "bench", nil)
		args := map[string]any{"text": benchText}
		b.ResetTimer()
		for b.Loop() {
			res, err := c.Call(ctx, "echo", args)
			if err != nil || len(res.Content) != 1 {
				b.Fatalf("%v %v", res, err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
	})

	b.Run("go-sdk", func(b *testing.B) {
		e := fakeEntry(b, "bench")
		cmd := exec.Command(e.Command, e.Args...)
		cmd.Env = mergeEnv(os.Environ(), e.Env)
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).
			Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		params := &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": benchText}}
		b.ResetTimer()
		for b.Loop() {
			res, err := cs.CallTool(ctx, params)
			if err != nil || len(res.Content) != 1 {
				b.Fatalf("%v %v", res, err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
	})
}

// BenchmarkMessageCodec measures encoding and decoding one tools/call
// request.
func BenchmarkMessageCodec(b *testing.B) {
	msg := &Message{ID: IntID(42), Method: MethodToolsCall, Params: json.RawMessage(`{"name":"echo","arguments":{"text":"` + benchText + `"}}`)}
	line, _ := json.Marshal(msg)
	b.Run("encode", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			var err error
			if buf, err = msg.AppendJSON(buf[:0]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			if _, err := DecodeMessage(line); err != nil {
				b.Fatal(err)
			}
		}
	})
}
