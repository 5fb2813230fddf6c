package engine

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"tai/engine/tool"
)

// Fork limits.
const (
	// ForkDefaultSteps and ForkDefaultTimeout apply when ForkOptions leaves
	// them zero.
	ForkDefaultSteps   = 10
	ForkDefaultTimeout = 5 * time.Minute
	// ForkMaxSteps and ForkMaxTimeout bound what a fork tool call may ask.
	ForkMaxSteps   = 50
	ForkMaxTimeout = 30 * time.Minute
)

// ForkOptions describes a bounded subagent.
type ForkOptions struct {
	// Task is the subagent's first (and only) user message.
	Task string
	// System replaces the profile's system prompt when non-empty (a brief).
	System string
	// Tools lists the tool names or path.Match patterns the subagent may
	// use; empty means every tool but fork. fork is never available inside
	// a fork.
	Tools []string
	// MaxSteps bounds its model calls; zero means ForkDefaultSteps.
	MaxSteps int
	// Timeout bounds its run; zero means ForkDefaultTimeout.
	Timeout time.Duration
	// Own, when set, are the only tools the subagent has: tools of its
	// own that the registry does not hold (the GitHub resolver's read-only
	// reads); Tools is then ignored. Their calls are approved and audited
	// like any other.
	Own []tool.Tool
	// Events receives the subagent's progress (optional).
	Events Events
}

// Fork runs a bounded subagent of the session: its own history, the
// session's profile and approver, a tool subset, a step limit and a
// deadline. Its tool calls are approved one by one like any other. It
// returns the subagent's final turn; an exhausted step limit is a Turn
// with Exhausted, a deadline an error.
func (s *Session) Fork(ctx context.Context, o ForkOptions) (Turn, error) {
	e := s.eng
	if o.Task == "" {
		return Turn{}, errors.New("fork: the task is empty: say what the subagent should do")
	}
	if o.MaxSteps <= 0 {
		o.MaxSteps = ForkDefaultSteps
	}
	if o.Timeout <= 0 {
		o.Timeout = ForkDefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	tools := o.Tools
	if len(o.Own) > 0 {
		tools = nil
		for _, t := range o.Own {
			if t.Run == nil || t.Name == "" {
				return Turn{}, fmt.Errorf("fork: own tool %q has no name or no Run", t.Name)
			}
			tools = append(tools, t.Name)
		}
		ctx = withOwnTools(ctx, o.Own)
	} else if err := e.checkForkTools(o.Tools); err != nil {
		return Turn{}, err
	}
	if len(tools) == 0 {
		tools = []string{"*"}
	}
	// The tools it was named are offered from the first step; patterns
	// leave the rest to the lazy selection and tool_search.
	var core []string
	for _, t := range tools {
		if !strings.ContainsAny(t, "*?[") {
			core = append(core, t)
		}
	}
	a := s.NewAgent(&AgentOptions{
		MaxSteps: o.MaxSteps,
		System:   o.System,
		Tools:    tools,
		Select:   tool.SelectOptions{Core: core},
		Own:      o.Own,
	})
	a.forbid("fork")
	turn, err := a.RunTurn(ctx, o.Task, &TurnOptions{Events: o.Events})
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return turn, fmt.Errorf("fork: the subagent ran past its deadline of %s after %d steps", o.Timeout, turn.Steps)
	}
	return turn, err
}

// withOwnTools returns ctx whose Caller has tools of its own, which the
// registry's lookup finds before its own.
func withOwnTools(ctx context.Context, tools []tool.Tool) context.Context {
	m := make(map[string]tool.Tool, len(tools))
	for _, t := range tools {
		m[t.Name] = t
	}
	c := tool.CallerFrom(ctx)
	c.Own = m
	return tool.WithCaller(ctx, c)
}

// forkListMax bounds the tool names an unmatched-tools error lists.
const forkListMax = 40

// checkForkTools refuses a tool list with a name or pattern that matches
// none of the tools a fork may use: the subagent would silently go without.
func (e *Engine) checkForkTools(tools []string) error {
	if len(tools) == 0 {
		return nil
	}
	var names []string
	for _, s := range e.reg.Specs() {
		if s.Name != "fork" {
			names = append(names, s.Name)
		}
	}
	var unmatched []string
	for _, pat := range tools {
		if _, err := path.Match(pat, ""); err != nil {
			return fmt.Errorf("fork: tool pattern %q is malformed (%v): use names or patterns such as mcp_github_*", pat, err)
		}
		if !slices.ContainsFunc(names, func(n string) bool { ok, _ := path.Match(pat, n); return ok }) {
			unmatched = append(unmatched, strconv.Quote(pat))
		}
	}
	if len(unmatched) == 0 {
		return nil
	}
	shown := names
	more := ""
	if len(shown) > forkListMax {
		shown, more = shown[:forkListMax], fmt.Sprintf(", … and %d more (find them with tool_search)", len(names)-forkListMax)
	}
	return fmt.Errorf("fork: no tool matches %s (fork itself is never available to a subagent); the tools are: %s%s",
		strings.Join(unmatched, ", "), strings.Join(shown, ", "), more)
}

func (e *Engine) forkTool() tool.Tool {
	return tool.Tool{
		Name: "fork",
		Description: "Hand a self-contained task to a subagent with its own fresh history and the same model, " +
			"limited to a tool subset, a step limit and a deadline; returns its final answer. Use it for research " +
			"or side tasks whose details would clutter this conversation.",
		Parameters: tool.Schema([]string{"task"}, map[string]any{
			"task":      tool.Prop("string", "what the subagent should do and what it should answer with"),
			"tools":     map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "tool names or patterns it may use (default: all but fork)"},
			"max_steps": tool.Prop("integer", fmt.Sprintf("model calls allowed (default %d, at most %d)", ForkDefaultSteps, ForkMaxSteps)),
			"timeout":   tool.Prop("integer", fmt.Sprintf("seconds allowed (default %d, at most %d)", int(ForkDefaultTimeout/time.Second), int(ForkMaxTimeout/time.Second))),
		}),
		Run: func(ctx context.Context, args map[string]any) (tool.Result, error) {
			a := tool.ReadArgs(args)
			task := a.Str("task", true)
			tools := a.Strings("tools")
			steps := a.Int("max_steps", ForkDefaultSteps)
			secs := a.Int("timeout", int(ForkDefaultTimeout/time.Second))
			if err := a.Err(); err != nil {
				return tool.ErrorResult("%v", err), nil
			}
			if steps <= 0 || steps > ForkMaxSteps {
				return tool.ErrorResult("max_steps %d is out of range: give 1 to %d", steps, ForkMaxSteps), nil
			}
			if secs <= 0 || time.Duration(secs)*time.Second > ForkMaxTimeout {
				return tool.ErrorResult("timeout %d s is out of range: give 1 to %d", secs, int(ForkMaxTimeout/time.Second)), nil
			}
			s, noSession := sessionOf(ctx, "fork")
			if noSession != nil {
				return *noSession, nil
			}
			turn, err := s.Fork(ctx, ForkOptions{Task: task, Tools: tools, MaxSteps: steps, Timeout: time.Duration(secs) * time.Second})
			if err != nil {
				if ctx.Err() != nil {
					return tool.Result{}, ctx.Err()
				}
				return tool.ErrorResult("%v", err), nil
			}
			text, failed := turn.Text, turn.Exhausted
			switch {
			case turn.Filtered:
				text, failed = strings.TrimSpace(text+"\n[the subagent's answer was withheld or cut by the provider's content filter, or refused]"), true
			case turn.Truncated:
				text += "\n[the subagent's answer was cut off at the model's output token limit]"
			case turn.Empty:
				text, failed = "[the subagent returned an empty answer]", true
			}
			return tool.Result{Content: []tool.Content{{Type: "text", Text: text}}, IsError: failed}, nil
		},
	}
}
