package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"tai/engine/tool"
)

// Lua tool limits.
const (
	// LuaDefaultTimeout bounds a chunk that names no timeout.
	LuaDefaultTimeout = 30 * time.Second
	// LuaMaxTimeout is the longest timeout a call may ask for.
	LuaMaxTimeout = 10 * time.Minute
	// luaStopGrace is how long a runner asked to stop may take to return
	// before it is abandoned.
	luaStopGrace = time.Second
)

// luaDone is what a LuaRunner returned.
type luaDone struct {
	printed string
	results []any
	err     error
}

// Lua is what the lua tool needs: the runner of a chunk and the redaction
// of the values it returns.
type Lua struct {
	// Run runs a chunk in a fresh sandboxed state.
	Run LuaRunner
	// Redact redacts the returned values as values before they are
	// encoded: an encoder escapes a secret's & < > (and " \) and would
	// hide it from the redaction of the text.
	Redact func(any) (any, error)
}

// Tool returns the lua tool.
func (l Lua) Tool() tool.Tool {
	return tool.Tool{
		Name: "lua",
		Description: "Run a chunk of Lua 5.1 in a fresh sandboxed state (no io, no os) and return what it printed " +
			fmt.Sprintf("and the values it returned. It is stopped after timeout seconds (default %d).", int(LuaDefaultTimeout/time.Second)),
		Parameters: tool.Schema([]string{"chunk"}, map[string]any{
			"chunk":   tool.Prop("string", "Lua source"),
			"timeout": tool.Prop("number", fmt.Sprintf("seconds before the chunk is stopped (default %d, at most %d)", int(LuaDefaultTimeout/time.Second), int(LuaMaxTimeout/time.Second))),
		}),
		Run: func(ctx context.Context, args map[string]any) (tool.Result, error) {
			a := tool.ReadArgs(args)
			chunk := a.Str("chunk", true)
			secs := a.Int("timeout", 0)
			if err := a.Err(); err != nil {
				return tool.ErrorResult("%v", err), nil
			}
			timeout := LuaDefaultTimeout
			if secs > 0 {
				timeout = time.Duration(secs) * time.Second
			}
			if secs < 0 || timeout > LuaMaxTimeout {
				return tool.ErrorResult("timeout %d s is out of range: give 1 to %d seconds", secs, int(LuaMaxTimeout/time.Second)), nil
			}
			parent := ctx
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			// The runner is expected to stop when ctx ends; one stuck in a
			// Go builtin that never looks is abandoned, so the call still
			// returns at the deadline.
			done := make(chan luaDone, 1)
			go func() {
				var d luaDone
				defer func() {
					if p := recover(); p != nil {
						d.err = fmt.Errorf("the Lua runner failed: %v", p)
					}
					done <- d
				}()
				d.printed, d.results, d.err = l.Run(ctx, chunk)
			}()
			var d luaDone
			select {
			case d = <-done:
			case <-ctx.Done():
				grace := time.NewTimer(luaStopGrace)
				defer grace.Stop()
				select {
				case d = <-done:
				case <-grace.C:
					if parent.Err() != nil {
						return tool.Result{}, parent.Err()
					}
					return tool.ErrorResult("stopped: the chunk ran longer than its timeout of %s and did not stop when asked, so it was abandoned", timeout), nil
				}
			}
			var b strings.Builder
			if d.printed != "" {
				b.WriteString(d.printed)
				if !strings.HasSuffix(d.printed, "\n") {
					b.WriteByte('\n')
				}
			}
			if d.err != nil {
				if parent.Err() != nil && errors.Is(d.err, parent.Err()) {
					return tool.Result{}, d.err
				}
				if errors.Is(ctx.Err(), context.DeadlineExceeded) {
					fmt.Fprintf(&b, "stopped: the chunk ran longer than its timeout of %s\n", timeout)
				} else {
					fmt.Fprintf(&b, "error: %v\n", d.err)
				}
				return tool.Result{Content: []tool.Content{{Type: "text", Text: b.String()}}, IsError: true}, nil
			}
			if len(d.results) > 0 {
				values, err := l.Redact(d.results)
				if err != nil {
					return tool.Result{}, err
				}
				data, err := marshalShown(values)
				if err != nil {
					data = []byte(fmt.Sprint(values))
				}
				fmt.Fprintf(&b, "returned: %s\n", data)
			}
			if b.Len() == 0 {
				b.WriteString("(no output, no return values)\n")
			}
			return tool.TextResult(b.String()), nil
		},
	}
}

// marshalShown encodes v as JSON for a person or a model to read: & < >
// are not escaped.
func marshalShown(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// LuaRunner runs a chunk of Lua in a fresh sandboxed state and returns what
// it printed and the values it returned. The lua package supplies it at
// boot; the engine registers the lua tool only when one is given.
type LuaRunner func(ctx context.Context, chunk string) (printed string, results []any, err error)
