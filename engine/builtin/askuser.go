package builtin

import (
	"context"

	"tai/engine/tool"
)

// AskUser is what the ask_user tool needs: the registry whose approver
// for the call asks the question.
type AskUser struct {
	// Registry finds the approver of the call in ctx.
	Registry *tool.Registry
}

// Tool returns the ask_user tool.
func (u AskUser) Tool() tool.Tool {
	return tool.Tool{
		Name:        "ask_user",
		Description: "Ask the person at the terminal a question and wait for the answer. Use it when a choice or a missing fact needs them.",
		Parameters: tool.Schema([]string{"question"}, map[string]any{
			"question": tool.Prop("string", "the question to ask"),
		}),
		// Asking is itself the consent: the person sees the question.
		Safe: true,
		Run: func(ctx context.Context, args map[string]any) (tool.Result, error) {
			a := tool.ReadArgs(args)
			q := a.Str("question", true)
			if err := a.Err(); err != nil {
				return tool.ErrorResult("%v", err), nil
			}
			answer, err := u.Registry.ApproverFor(ctx).Ask(ctx, q)
			if err != nil {
				if ctx.Err() != nil {
					return tool.Result{}, ctx.Err()
				}
				return tool.ErrorResult("ask_user denied: %v; decide without asking, or stop and say what you need", err), nil
			}
			return tool.TextResult(answer), nil
		},
	}
}
