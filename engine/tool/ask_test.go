package tool

import (
	"context"
	"errors"
	"testing"

	"tai/vault/vaulttest"
)

// TestAnswerer: a server's request reaches the person only in
// interactive mode, through the caller's prompter; every other case is
// nobody, with the reason the call's line shows.
func TestAnswerer(t *testing.T) {
	p := &prompter{answer: "ok"}
	reg := NewRegistry(vaulttest.Open(t), NewApprover(Interactive, p))
	tests := []struct {
		name    string
		ctx     context.Context
		refusal string
	}{
		{name: "person", ctx: WithCaller(context.Background(), Caller{})},
		{name: "no call", ctx: context.Background(), refusal: RefusedNoCall},
		{name: "auto", ctx: WithCaller(context.Background(), Caller{Approver: NewApprover(Auto, p)}), refusal: "--auto answers no server's questions"},
		{name: "yolo", ctx: WithCaller(context.Background(), Caller{Approver: NewApprover(Yolo, p)}), refusal: "--yolo answers no server's questions"},
		{name: "served", ctx: WithCaller(context.Background(), Caller{Name: "mcp:1a2b", Approver: NewApprover(Yolo, nil), ByModel: true}), refusal: RefusedServed},
		{name: "no prompter", ctx: WithCaller(context.Background(), Caller{Approver: NewApprover(Interactive, nil)}), refusal: RefusedNoTerminal},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := reg.Answerer(tc.ctx)
			if a.Refusal != tc.refusal || (a.Prompter == nil) != (tc.refusal != "") {
				t.Fatalf("Answerer = %+v, want refusal %q", a, tc.refusal)
			}
			var got string
			err := a.Ask(tc.ctx, func(p Prompter) error {
				var err error
				got, err = p.Ask(tc.ctx, "name?")
				return err
			})
			if tc.refusal == "" {
				if err != nil || got != "ok" {
					t.Fatalf("Ask = %q, %v; want the person's answer", got, err)
				}
				return
			}
			var nobody *ErrNobody
			if !errors.As(err, &nobody) || nobody.Refusal != tc.refusal || !errors.Is(err, ErrNoPrompter) {
				t.Fatalf("Ask err = %v, want ErrNobody %q wrapping ErrNoPrompter", err, tc.refusal)
			}
		})
	}
}

// TestAnswererNoTerminal: a prompter that finds no terminal (tai -p
// piped) is a refusal with its reason, as nobody being there is.
func TestAnswererNoTerminal(t *testing.T) {
	p := &prompter{err: ErrNoPrompter}
	reg := NewRegistry(vaulttest.Open(t), NewApprover(Interactive, p))
	ctx := WithCaller(context.Background(), Caller{})
	err := reg.Answerer(ctx).Ask(ctx, func(p Prompter) error {
		_, err := p.Ask(ctx, "name?")
		return err
	})
	var nobody *ErrNobody
	if !errors.As(err, &nobody) || nobody.Refusal != RefusedNoTerminal {
		t.Fatalf("err = %v, want ErrNobody %q", err, RefusedNoTerminal)
	}
}

// TestNote: a note reaches the call's line when the caller has one, and
// is dropped without one.
func TestNote(t *testing.T) {
	var got []string
	ctx := WithCaller(context.Background(), Caller{Note: func(s string) { got = append(got, s) }})
	Note(ctx, "declined")
	Note(context.Background(), "nowhere")
	if len(got) != 1 || got[0] != "declined" {
		t.Fatalf("notes %q, want [declined]", got)
	}
}
