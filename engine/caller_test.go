package engine

import (
	"context"
	"errors"
	"testing"

	"tai/engine/llm"
	"tai/engine/tool"
	"tai/vault/vaulttest"
)

// A call the person makes themselves is not asked about; the same call
// made inside a model's turn (a tool the model called that calls another
// tool) is, even when the turn itself was started from the person's code.
func TestPersonsOwnCallIsNotAskedAgain(t *testing.T) {
	p := &prompter{allow: false}
	reg := tool.NewRegistry(vaulttest.Open(t), tool.NewApprover(tool.Interactive, p))
	ran := 0
	addTool(t, reg, tool.Tool{Name: "poke", Description: "pokes", Run: func(context.Context, map[string]any) (tool.Result, error) {
		ran++
		return tool.TextResult("poked"), nil
	}})

	if _, err := reg.Dispatch(tool.ByPerson(context.Background()), "poke", nil); err != nil {
		t.Fatalf("the person's own call: %v", err)
	}
	if ran != 1 || len(p.seen()) != 0 {
		t.Fatalf("the person's own call: ran %d times, asked %d times; want 1 and 0", ran, len(p.seen()))
	}

	if _, err := reg.Dispatch(context.Background(), "poke", nil); !errors.Is(err, tool.ErrDenied) {
		t.Fatalf("a call with no person behind it: err = %v, want a denial", err)
	}

	// A tool the model calls that calls poke on the person's context.
	addTool(t, reg, tool.Tool{Name: "relay", Description: "calls poke", Run: func(ctx context.Context, _ map[string]any) (tool.Result, error) {
		if _, err := reg.Dispatch(tool.ByPerson(ctx), "poke", nil); err != nil {
			return tool.ErrorResult("%v", err), nil
		}
		return tool.TextResult("relayed"), nil
	}})
	p.allow = true
	model := &scripted{steps: []func(context.Context, llm.Request, func(string)) (llm.Response, error){calls("relay", `{}`), say("done")}}
	a := NewAgent(reg, StaticModel(model, ""), nil)
	before := len(p.seen())
	if _, err := a.RunTurn(tool.ByPerson(context.Background()), "go", nil); err != nil {
		t.Fatal(err)
	}
	asked := p.seen()[before:]
	if len(asked) != 2 || asked[0].Tool != "relay" || asked[1].Tool != "poke" {
		t.Fatalf("in the model's turn the person was asked %v; want relay, then poke", asked)
	}
}
