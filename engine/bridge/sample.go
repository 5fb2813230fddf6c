package bridge

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"tai/engine/llm"
	"tai/engine/tool"
	"tai/mcp"
	"tai/mcp/sampling"
	"tai/vault"
)

// DefaultSamplingLimit is how many sampling requests one server may make
// a minute when Options.SamplingLimit does not say.
const DefaultSamplingLimit = 10

// SampleFunc has the person's current model (that of the session whose
// call is in flight in ctx) answer req; it returns the answer and the
// model's name. engine.Engine.Sample is one.
type SampleFunc func(ctx context.Context, req llm.Request) (llm.Response, string, error)

// CodeSamplingRefused is the JSON-RPC code of a sampling request tai
// does not answer (denied, refused, rate-limited), as the spec's example
// of a user rejection has it.
const CodeSamplingRefused = -1

// sampleWindow is a server's sampling requests of the last minute, for
// the rate limit.
type sampleWindow struct {
	mu    sync.Mutex
	times []time.Time
}

// allow records a request at now and reports whether it is within limit
// a minute.
func (w *sampleWindow) allow(now time.Time, limit int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	kept := w.times[:0]
	for _, t := range w.times {
		if now.Sub(t) < time.Minute {
			kept = append(kept, t)
		}
	}
	w.times = kept
	if len(w.times) >= limit {
		return false
	}
	w.times = append(w.times, now)
	return true
}

// samplingLimit is the number of sampling requests a server may make a
// minute.
func (b *Bridge) samplingLimit() int {
	if b.opts.SamplingLimit != nil {
		if n := b.opts.SamplingLimit(); n > 0 {
			return n
		}
	}
	return DefaultSamplingLimit
}

// sample answers one sampling/createMessage from server: within the rate
// limit, a request within sampling's bounds is shown in full to the
// person of the call in flight, who approves, denies or edits it; the
// person's model answers; the answer is shown, and goes back only when
// the person says so. Nobody to ask (--auto, --yolo, a served session,
// no terminal) refuses it. What happened is said on the call's line,
// counted in the turn's usage and audited as mcp-sampling (the request's
// digest, never its text).
func (b *Bridge) sample(ctx context.Context, server string, window *sampleWindow, params json.RawMessage) (json.RawMessage, error) {
	start := time.Now()
	sum := sha256.Sum256(params)
	audit := func(outcome string, size int) {
		_, _ = b.store.AuditAppend(vault.AuditEntry{Kind: "mcp-sampling", Subject: server, Digest: hex.EncodeToString(sum[:8]),
			Outcome: outcome, Duration: time.Since(start), Size: size, Session: tool.CallerFrom(ctx).Name})
	}
	refuse := func(outcome, note string, code int) error {
		tool.Note(ctx, b.shown(note))
		audit(outcome, 0)
		return &mcp.WireError{Code: code, Message: "tai did not sample: " + note}
	}
	if limit := b.samplingLimit(); !window.allow(start, limit) {
		return nil, refuse("rate-limited", fmt.Sprintf("%s asked for sampling more than %d times a minute; refused", server, limit), CodeSamplingRefused)
	}
	req, err := sampling.Parse(params)
	if err != nil {
		return nil, refuse("refused", fmt.Sprintf("%s asked for sampling: %v", server, err), mcp.CodeInvalidParams)
	}
	q := tool.SampleQuestion{Server: server, Model: b.sampleModel(ctx), Request: req}
	who := b.reg.Answerer(ctx)
	var dec sampling.Decision
	err = who.Ask(ctx, func(p tool.Prompter) error {
		s, ok := p.(tool.Sampler)
		if !ok {
			return &tool.ErrNobody{Refusal: tool.RefusedNoTerminal}
		}
		var err error
		dec, err = s.ReviewSample(ctx, q)
		return err
	})
	var nobody *tool.ErrNobody
	switch {
	case errors.As(err, &nobody):
		return nil, refuse("refused", fmt.Sprintf("%s asked for sampling, refused: %s", server, nobody.Refusal), CodeSamplingRefused)
	case err != nil:
		return nil, refuse("error", fmt.Sprintf("%s asked for sampling, not sent: %v", server, err), CodeSamplingRefused)
	case dec.Action != sampling.Approve:
		return nil, refuse("denied", fmt.Sprintf("%s asked for sampling; you denied it", server), CodeSamplingRefused)
	}
	if dec.Prompt != nil {
		req.SetPrompt(*dec.Prompt)
		q.Request = req
	}
	offered := dec.Tools && len(req.Tools) > 0 && req.ToolChoice != "none"
	resp, model, err := b.opts.Sample(ctx, modelRequest(req, offered))
	tool.Spend(ctx, resp.Usage)
	if err != nil {
		return nil, refuse("error", fmt.Sprintf("%s asked for sampling; the model failed: %v", server, err), CodeSamplingRefused)
	}
	res := sampling.Result{Model: cmp.Or(model, q.Model, "unknown"), Text: b.store.Redact(resp.Message.Content), StopReason: sampling.EndTurn}
	if llm.CutOff(resp.FinishReason) {
		res.StopReason = sampling.MaxTokensReached
	}
	if offered {
		for _, tc := range resp.Message.ToolCalls {
			if req.Offers(tc.Name) {
				res.ToolCalls = append(res.ToolCalls, sampling.ToolCall{ID: tc.ID, Name: tc.Name, Input: json.RawMessage(b.store.Redact(string(tc.Arguments)))})
			}
		}
		if len(res.ToolCalls) > 0 {
			res.StopReason = sampling.ToolUse
		}
	}
	var back bool
	err = who.Ask(ctx, func(p tool.Prompter) error {
		var err error
		back, err = p.(tool.Sampler).ReviewAnswer(ctx, q, res)
		return err
	})
	if err != nil || !back {
		return nil, refuse("denied", fmt.Sprintf("%s asked for sampling; you kept %s's answer from it", server, res.Model), CodeSamplingRefused)
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return nil, refuse("error", fmt.Sprintf("%s asked for sampling; the answer could not be written: %v", server, err), mcp.CodeInternalError)
	}
	tool.Note(ctx, b.shown(fmt.Sprintf("%s asked for sampling; %s answered (%d tokens in, %d out), returned with your approval",
		server, res.Model, resp.Usage.InputTokens, resp.Usage.OutputTokens)))
	audit("ok", len(raw))
	return raw, nil
}

// sampleModel names the model that would answer within ctx.
func (b *Bridge) sampleModel(ctx context.Context) string {
	if b.opts.SampleModel != nil {
		return b.opts.SampleModel(ctx)
	}
	return ""
}

// modelRequest is req as the model is sent it: the system prompt, the
// messages (images and audio as labels, tool uses as calls, tool results
// as tool messages), maxTokens, and the request's tools when offered.
func modelRequest(req sampling.Request, offered bool) llm.Request {
	out := llm.Request{MaxTokens: req.MaxTokens}
	if req.SystemPrompt != "" {
		out.Messages = append(out.Messages, llm.Message{Role: "system", Content: req.SystemPrompt})
	}
	for _, m := range req.Messages {
		msg := llm.Message{Role: m.Role}
		var texts []string
		for _, c := range m.Content {
			switch c.Type {
			case "tool_use":
				msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Input})
			case "tool_result":
				out.Messages = append(out.Messages, llm.Message{Role: "tool", ToolCallID: c.ID, Content: c.Text, IsError: c.IsError})
			default:
				texts = append(texts, c.Label())
			}
		}
		if len(texts) > 0 || len(msg.ToolCalls) > 0 {
			msg.Content = strings.Join(texts, "\n")
			out.Messages = append(out.Messages, msg)
		}
	}
	if offered {
		for _, t := range req.Tools {
			params := t.InputSchema
			if params == nil {
				params = map[string]any{"type": "object"}
			}
			out.Tools = append(out.Tools, llm.ToolSpec{Name: t.Name, Description: t.Description, Parameters: params})
		}
	}
	return out
}
