package engine

import (
	"context"
	"fmt"
	"strings"

	"tai/engine/tool"
)

// ToolSearchDefault is how many tools tool_search returns (and enables)
// when the call names no limit.
const ToolSearchDefault = 8

func (e *Engine) toolSearchTool() tool.Tool {
	return tool.Tool{
		Name: "tool_search",
		Description: "Search all available tools (native and from MCP servers) by words of their name and description, " +
			"and enable the matches so they are offered from now on. Use it when the tool you need is not offered.",
		Parameters: tool.Schema([]string{"query"}, map[string]any{
			"query": tool.Prop("string", "words describing what the tool should do"),
			"limit": tool.Prop("integer", fmt.Sprintf("most tools to return (default %d)", ToolSearchDefault)),
		}),
		Safe: true,
		Run: func(ctx context.Context, args map[string]any) (tool.Result, error) {
			a := tool.ReadArgs(args)
			q := a.Str("query", true)
			limit := a.Int("limit", ToolSearchDefault)
			if err := a.Err(); err != nil {
				return tool.ErrorResult("%v", err), nil
			}
			if limit <= 0 || limit > 100 {
				return tool.ErrorResult("limit %d is out of range: give 1 to 100", limit), nil
			}
			agent, inAgent := AgentFrom(ctx)
			profile := ""
			if s, ok := SessionFrom(ctx); ok {
				profile = s.Profile().Name
			}
			found := e.reg.SearchFor(profile, q, limit*4)
			var b strings.Builder
			n := 0
			var names []string
			for _, s := range found {
				if n == limit {
					break
				}
				if inAgent && !agent.allowed(s.Name) {
					continue
				}
				n++
				names = append(names, s.Name)
				fmt.Fprintf(&b, "%s: %s\n", s.Name, tool.Clip(s.Description, 300))
			}
			if n == 0 {
				return tool.TextResult(fmt.Sprintf("no tool matches %q: try other words", q)), nil
			}
			if inAgent {
				agent.Enable(names...)
				b.WriteString("These tools are now enabled and will be offered from the next step on.\n")
			}
			return tool.TextResult(b.String()), nil
		},
	}
}
