package tool

import (
	"context"
	"errors"
	"strings"
	"testing"

	"tai/vault/vaulttest"
)

// interrupter is a person who presses Ctrl-C at the consent screen: the
// turn's context is cancelled, and the front end's prompter fails with its
// own error text (a Lua traceback, say).
type interrupter struct{ cancel context.CancelFunc }

func (p interrupter) Confirm(context.Context, Consent) (bool, error) {
	p.cancel()
	return false, errors.New("stdlib/chat.lua:571: context canceled\nstack traceback:\n\tstdlib/chat.lua:571: in function <stdlib/chat.lua:562>")
}

func (p interrupter) Ask(context.Context, string) (string, error) { return "", nil }

// A call interrupted while the person was asked is denied with a plain
// reason: the prompter's internals (a Lua traceback) never reach the
// model's history.
func TestInterruptedConsentIsAPlainDenial(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reg := NewRegistry(vaulttest.Open(t), NewApprover(Interactive, interrupter{cancel}))
	ran := false
	if err := reg.Add(Tool{Name: "poke", Description: "pokes", Run: func(context.Context, map[string]any) (Result, error) {
		ran = true
		return Result{}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	_, err := reg.Prepare(ctx, "poke", map[string]any{})
	if !errors.Is(err, ErrDenied) {
		t.Fatalf("err = %v, want a denial", err)
	}
	if ran {
		t.Fatal("the tool ran")
	}
	for _, bad := range []string{"traceback", "chat.lua"} {
		if strings.Contains(err.Error(), bad) {
			t.Fatalf("err = %q, shows %q", err, bad)
		}
	}
	if !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("err = %q, want it to say the turn was interrupted", err)
	}
}
