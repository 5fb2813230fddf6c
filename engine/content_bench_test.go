package engine

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"tai/engine/llm"
	"tai/engine/tool"
)

// BenchmarkTurnImageResult and BenchmarkTurnTextResult run the same turn:
// the model calls a tool whose MCP result (1 MB of content, as the
// server's JSON) is decoded, goes through redaction and the spill, and is
// sent back to the model, which answers. The text is spilled to a record;
// the image is held once, as bytes, and base64-encoded only into the
// request. The model is a loopback server that reads and discards each
// request, so what is measured is tai's share.
func BenchmarkTurnImageResult(b *testing.B) {
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	item, _ := json.Marshal(map[string]string{"type": "image", "mimeType": "image/png", "data": base64.StdEncoding.EncodeToString(data)})
	benchTurn(b, item, true)
}

func BenchmarkTurnTextResult(b *testing.B) {
	item, _ := json.Marshal(map[string]string{"type": "text", "text": strings.Repeat("0123456789abcde\n", 1<<16)})
	benchTurn(b, item, false)
}

func benchTurn(b *testing.B, item []byte, image bool) {
	raw := []byte(`{"content":[` + string(item) + `]}`)
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buf [32 << 10]byte
		io.CopyBuffer(io.Discard, r.Body, buf[:])
		w.Header().Set("Content-Type", "application/json")
		if n.Add(1)%2 == 1 {
			io.WriteString(w, `{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"shot","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`)
			return
		}
		io.WriteString(w, `{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"seen"},"finish_reason":"stop"}]}`)
	}))
	b.Cleanup(srv.Close)
	e := fakeProfileEngine(b, llm.ProviderOpenAI, srv.URL, &Options{Mode: tool.Yolo})
	addTool(b, e.Tools(), tool.Tool{Name: "shot", Description: "returns 1 MB", Safe: true,
		Parameters: map[string]any{"type": "object", "properties": map[string]any{}},
		Run: func(context.Context, map[string]any) (tool.Result, error) {
			var res tool.Result
			err := json.Unmarshal(raw, &res)
			return res, err
		}})
	a := newSession(b, e).NewAgent(nil)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		a.Reset()
		if _, err := a.RunTurn(ctx, "take it", nil); err != nil {
			b.Fatal(err)
		}
		if got := len(a.History()); got != 4 {
			b.Fatalf("history of %d messages", got)
		}
		if h := a.History()[2]; image != (len(h.Parts) == 1) {
			b.Fatalf("tool message parts: %d", len(h.Parts))
		}
	}
}
