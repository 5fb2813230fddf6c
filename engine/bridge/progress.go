package bridge

import (
	"context"
	"encoding/json"
	"math"
	"unicode/utf8"

	"tai/engine/tool"
	"tai/mcp/screen"
)

// progressMessageMax is how many bytes of a server's progress message are
// shown; the rest is cut.
const progressMessageMax = 200

// progressParamsMax bounds the params of a progress notification the
// bridge reads: a larger one still renews the call's timeout (the mcp
// client saw to that) but is not decoded, so a server sending megabytes
// of message per step costs tai no more than a scan.
const progressParamsMax = 16 << 10

// progressHandler passes a server's notifications/progress to the
// tool.Caller of the call it belongs to (the mcp client has checked the
// token names that call and the progress grows): its message redacted,
// on one visible line, cut to progressMessageMax bytes; a total that is
// not above zero or below the progress is left out.
func (b *Bridge) progressHandler(ctx context.Context, params json.RawMessage) {
	show := tool.CallerFrom(ctx).Progress
	if show == nil || len(params) > progressParamsMax {
		return
	}
	var n struct {
		Progress float64 `json:"progress"`
		Total    float64 `json:"total"`
		Message  string  `json:"message"`
	}
	if json.Unmarshal(params, &n) != nil {
		return
	}
	if n.Total <= 0 || n.Total < n.Progress || math.IsInf(n.Total, 0) {
		n.Total = 0
	}
	msg := screen.VisibleLine(b.store.Redact(n.Message))
	if len(msg) > progressMessageMax {
		cut := progressMessageMax
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	show(tool.Progress{Progress: n.Progress, Total: n.Total, Message: msg})
}
