package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"

	"tai/mcp"
)

// ProgressFunc reports how far a served call has come: progress (greater
// than the last reported; anything else is dropped), of total (0 when
// unknown), and a message for the client. It is safe for concurrent use
// and returns once the notification is written.
type ProgressFunc func(progress, total float64, message string)

type progressKey struct{}

// ProgressFrom returns what reports the progress of the call ctx belongs
// to, or nil when its client asked for none (no _meta.progressToken) or
// cannot read an event stream.
func ProgressFrom(ctx context.Context) ProgressFunc {
	f, _ := ctx.Value(progressKey{}).(ProgressFunc)
	return f
}

// stream is the answer of a tools/call whose client sent a progressToken
// and accepts text/event-stream: a plain JSON reply until something must
// be sent before the result (progress, a log message), then an event
// stream carrying those and, last, the result.
type stream struct {
	w     http.ResponseWriter
	token json.RawMessage

	mu   sync.Mutex
	open bool // the event stream was started
	done bool // the result was written, or the call is over
	last float64
	sent bool // last holds a progress sent
}

// acceptsStream reports whether an Accept header takes text/event-stream.
func acceptsStream(accept string) bool {
	for part := range strings.SplitSeq(accept, ",") {
		mt, _, _ := strings.Cut(part, ";")
		switch strings.ToLower(strings.TrimSpace(mt)) {
		case "text/event-stream", "text/*", "*/*":
			return true
		}
	}
	return false
}

// progress sends a notifications/progress for the stream's token.
func (st *stream) progress(progress, total float64, message string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.done || (st.sent && progress <= st.last) {
		return
	}
	st.last, st.sent = progress, true
	p := struct {
		Token    json.RawMessage `json:"progressToken"`
		Progress float64         `json:"progress"`
		Total    float64         `json:"total,omitempty"`
		Message  string          `json:"message,omitempty"`
	}{st.token, progress, total, message}
	st.notifyLocked(mcp.MethodProgress, p)
}

// notify sends a notification on the stream, starting it if need be.
func (st *stream) notify(method string, params any) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.done {
		st.notifyLocked(method, params)
	}
}

func (st *stream) notifyLocked(method string, params any) {
	raw, err := json.Marshal(params)
	if err != nil {
		return
	}
	b, err := mcp.EncodeMessage(&mcp.Message{Method: method, Params: raw})
	if err != nil {
		return
	}
	st.eventLocked(b)
}

// eventLocked writes one message as an event, starting the stream first.
func (st *stream) eventLocked(msg []byte) {
	if !st.open {
		st.open = true
		h := st.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		st.w.WriteHeader(http.StatusOK)
	}
	buf := make([]byte, 0, len(msg)+24)
	buf = append(buf, "event: message\ndata: "...)
	buf = append(buf, msg...)
	buf = append(buf, "\n\n"...)
	if _, err := st.w.Write(buf); err == nil {
		_ = http.NewResponseController(st.w).Flush()
	}
}

// finish ends the call: when the stream was started, the result goes as
// its last event and finish reports true; otherwise nothing is written
// (the caller replies with plain JSON). Nothing is sent afterwards.
func (st *stream) finish(m *mcp.Message) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.done = true
	if !st.open {
		return false
	}
	b, err := mcp.EncodeMessage(m)
	if err != nil {
		b, _ = mcp.EncodeMessage(errorReply(m.ID, mcp.CodeInternalError, "the answer could not be sent: "+err.Error()))
	}
	st.eventLocked(b)
	return true
}
