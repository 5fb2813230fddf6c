package engine

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"tai/engine/tool"
	"tai/vault"
)

// A call a kept rule covers runs without a question in Interactive mode,
// whatever the prompter would say and with no prompter at all (tai -p
// with its input piped); a call it does not cover is still asked about;
// a served session's approver never reads the rules.
func TestKeptRuleApprovesWithoutAsking(t *testing.T) {
	for _, tt := range []struct {
		name string
		p    tool.Prompter
	}{
		{"a prompter that refuses", &prompter{allow: false}},
		{"no prompter", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t, nil, &Options{Prompter: tt.p})
			dir, err := filepath.Abs(e.Dir())
			if err != nil {
				t.Fatal(err)
			}
			if err := e.store.PermissionAdd(vault.Permission{Dir: dir, Tool: "shell", Prefix: "echo"}); err != nil {
				t.Fatal(err)
			}
			s := newSession(t, e)
			res, err := s.Dispatch(turnCtx(t), "shell", map[string]any{"command": "echo ran-by-rule"})
			if err != nil || !strings.Contains(res.Text(), "ran-by-rule") {
				t.Fatalf("the covered call: %v, %q", err, res.Text())
			}
			if p, ok := tt.p.(*prompter); ok && len(p.seen()) != 0 {
				t.Fatalf("the person was asked about a covered call: %v", p.seen())
			}
			if _, err := s.Dispatch(turnCtx(t), "shell", map[string]any{"command": "echo a; echo b"}); !errors.Is(err, tool.ErrDenied) {
				t.Fatalf("a call the rule does not cover: err = %v, want a denial", err)
			}
			served, err := e.NewSession(&SessionOptions{Name: "mcp:x", Approver: tool.NewApprover(tool.Interactive, nil)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := served.Dispatch(turnCtx(t), "shell", map[string]any{"command": "echo ran-by-rule"}); !errors.Is(err, tool.ErrDenied) {
				t.Fatalf("an approver the engine did not make read the rules: err = %v", err)
			}
		})
	}
}
