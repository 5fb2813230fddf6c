package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"tai/engine/tool"
)

func TestAskUser(t *testing.T) {
	tests := []struct {
		name     string
		prompter tool.Prompter
		mode     tool.Mode
		want     string
		isErr    bool
	}{
		{name: "no prompter denies", mode: tool.Yolo, isErr: true, want: "denied"},
		{name: "no tty denies", prompter: &prompter{err: tool.ErrNoPrompter}, isErr: true, want: "denied"},
		{name: "answers", prompter: &prompter{answer: "blue"}, want: "blue"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t, nil, &Options{Prompter: tt.prompter, Mode: tt.mode})
			res, err := newSession(t, e).Dispatch(context.Background(), "ask_user", map[string]any{"question": "colour?"})
			if err != nil || res.IsError != tt.isErr || !strings.Contains(res.Text(), tt.want) {
				t.Fatalf("ask_user = %q (isError %v), %v; want %q isError %v", res.Text(), res.IsError, err, tt.want, tt.isErr)
			}
		})
	}
}

func TestConsentHidesSecrets(t *testing.T) {
	p := &prompter{allow: true}
	e := newEngine(t, nil, &Options{Prompter: p})
	if err := e.Store().SecretSet("known", "known-secret-value-1", nil); err != nil {
		t.Fatal(err)
	}
	addTool(t, e.Tools(), textTool("post", "", false, "ok"))
	if _, err := newSession(t, e).Dispatch(context.Background(), "secret_set", map[string]any{"name": "new", "value": "brand-new-value-2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := newSession(t, e).Dispatch(context.Background(), "post", map[string]any{"body": "auth known-secret-value-1"}); err != nil {
		t.Fatal(err)
	}
	seen := p.seen()
	if len(seen) != 2 {
		t.Fatalf("consents = %+v", seen)
	}
	if seen[0].Args["value"] != "[hidden]" || seen[0].Args["name"] != "new" {
		t.Errorf("secret_set consent shows %v", seen[0].Args)
	}
	if body, _ := seen[1].Args["body"].(string); strings.Contains(body, "known-secret-value-1") || !strings.Contains(body, "REDACTED") {
		t.Errorf("consent shows a known secret: %v", seen[1].Args)
	}
	// The digest is over the arguments as shown: a weak secret cannot be
	// guessed back from the audit trail by hashing candidates.
	if seen[0].Digest == tool.Digest(map[string]any{"name": "new", "value": "brand-new-value-2"}) ||
		seen[0].Digest != tool.Digest(map[string]any{"name": "new", "value": "[hidden]"}) {
		t.Error("the digest is not over the shown arguments (the secret value hidden)")
	}
	if seen[1].Digest == tool.Digest(map[string]any{"body": "auth known-secret-value-1"}) {
		t.Error("the digest covers a known secret value")
	}
	entries, err := e.Store().AuditTail(2, "tool")
	if err != nil || len(entries) != 2 || entries[0].Digest != seen[0].Digest || entries[1].Digest != seen[1].Digest {
		t.Errorf("audit digests %+v differ from the consent digests %s, %s (%v)", entries, seen[0].Digest, seen[1].Digest, err)
	}
	if got, _, err := e.Store().SecretGet("new"); err != nil || got != "brand-new-value-2" {
		t.Fatalf("the tool got hidden arguments: %q, %v", got, err)
	}
}

func TestModesAndRunTimeSwitch(t *testing.T) {
	for _, m := range []tool.Mode{tool.Interactive, tool.Auto, tool.Yolo} {
		got, err := tool.ParseMode(m.String())
		if err != nil || got != m {
			t.Errorf("ParseMode(%q) = %v, %v", m.String(), got, err)
		}
	}
	if _, err := tool.ParseMode("sometimes"); err == nil || !strings.Contains(err.Error(), "interactive, auto or yolo") {
		t.Errorf("ParseMode of a bad mode: %v", err)
	}
	e := newEngine(t, nil, nil)
	addTool(t, e.Tools(), textTool("act", "", false, "done"))
	s := newSession(t, e)
	if _, err := s.Dispatch(context.Background(), "act", nil); !errors.Is(err, tool.ErrDenied) {
		t.Fatalf("interactive without prompter: %v", err)
	}
	s.Approver().SetMode(tool.Yolo)
	if res, err := s.Dispatch(context.Background(), "act", nil); err != nil || res.Text() != "done" {
		t.Fatalf("after switching to yolo: %q, %v", res.Text(), err)
	}
	s.Approver().SetMode(tool.Interactive)
	p := &prompter{allow: true}
	s.Approver().SetPrompter(p)
	if _, err := s.Dispatch(context.Background(), "act", nil); err != nil || len(p.seen()) != 1 {
		t.Fatalf("after installing a prompter: %v, %d prompts", err, len(p.seen()))
	}
}

// TestInvalidCallIsNotAsked: a call its schema refuses is answered with
// the error and never put to the person; a valid one is.
func TestInvalidCallIsNotAsked(t *testing.T) {
	p := &prompter{allow: true}
	e := newEngine(t, nil, &Options{Prompter: p})
	s := newSession(t, e)
	res, err := s.Dispatch(context.Background(), "write_file", map[string]any{"path": "x.txt"})
	if err != nil || !res.IsError || !strings.Contains(res.Text(), `argument "content" is missing`) {
		t.Fatalf("got %v, %v", res, err)
	}
	if n := len(p.seen()); n != 0 {
		t.Fatalf("the person was asked %d times about an invalid call", n)
	}
	if _, err := s.Dispatch(context.Background(), "write_file", map[string]any{"path": "x.txt", "content": "ok"}); err != nil {
		t.Fatal(err)
	}
	if n := len(p.seen()); n != 1 {
		t.Fatalf("asked %d times about a valid call, want 1", n)
	}
	// An edit the file does not allow (edit_file's Check) is not asked
	// about either.
	for _, args := range []map[string]any{
		{"path": "x.txt", "old_string": "absent", "new_string": "y"},
		{"path": "missing.txt", "old_string": "ok", "new_string": "y"},
	} {
		res, err := s.Dispatch(context.Background(), "edit_file", args)
		if err != nil || !res.IsError || !strings.Contains(res.Text(), "edit_file:") {
			t.Fatalf("edit_file(%v) = %v, %v", args, res, err)
		}
	}
	if n := len(p.seen()); n != 1 {
		t.Fatalf("asked %d times in all, want 1", n)
	}
	if _, err := s.Dispatch(context.Background(), "edit_file", map[string]any{"path": "x.txt", "old_string": "ok", "new_string": "fine"}); err != nil {
		t.Fatal(err)
	}
	if n := len(p.seen()); n != 2 {
		t.Fatalf("a possible edit was asked about %d times in all, want 2", n)
	}
}
