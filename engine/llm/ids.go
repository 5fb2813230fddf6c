package llm

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"
)

// newCallID makes an id for a tool call whose server sent none. It is
// random, so ids made in different turns of one conversation never repeat
// (a provider refuses two calls of one id).
func newCallID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}

// callID keeps a provider's call id, or makes one for servers that send
// none.
func callID(id string) string {
	if id != "" {
		return id
	}
	return newCallID()
}

// wireIDs gives the tool calls of one request ids its provider accepts,
// whichever provider wrote the history: each call gets an id unique in the
// request, and each tool result the id its call was sent with. A history
// kept from another server may carry ids the provider refuses (Kimi's
// "functions.read_file:0" has characters outside Anthropic's
// ^[a-zA-Z0-9_-]+$) or the same id twice (servers that number their calls
// from 0 every turn). Ids that are fine already are sent unchanged.
type wireIDs struct {
	// strict limits ids to ASCII letters, digits, '_' and '-' (Anthropic).
	strict bool
	used   map[string]bool
	// sent maps an id as stored to the id sent, for the latest assistant
	// message that made a call of that id, so results find their call.
	sent map[string]string
}

func newWireIDs(strict bool) *wireIDs {
	return &wireIDs{strict: strict, used: map[string]bool{}, sent: map[string]string{}}
}

// call returns the id to send for a call stored as id.
func (w *wireIDs) call(id string) string {
	base := w.clean(id)
	out := base
	for n := 2; w.used[out]; n++ {
		out = base + "_" + strconv.Itoa(n)
	}
	w.used[out] = true
	w.sent[id] = out
	return out
}

// result returns the id to send for a tool result answering the call
// stored as id.
func (w *wireIDs) result(id string) string {
	if out, ok := w.sent[id]; ok {
		return out
	}
	return w.clean(id)
}

func (w *wireIDs) clean(id string) string {
	if w.strict {
		id = strings.Map(func(r rune) rune {
			if r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
				return r
			}
			return '_'
		}, id)
	}
	if id == "" {
		id = "call"
	}
	return id
}
