package engine

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tai/engine/llm"
	"tai/engine/tool"
	"tai/vault/vaulttest"
)

// TestShellPolicy: the shell's policy denies the vault's folder and the
// folders of the deny list as it is when the command starts, and is off
// for a session on a profile that says sandbox = false.
func TestShellPolicy(t *testing.T) {
	store := vaulttest.Open(t)
	deny := []string{"/srv/secret"}
	e, err := New(store, &Options{Mode: tool.Yolo, Dir: t.TempDir(), Getenv: noEnv, SandboxDeny: func() []string { return deny },
		NewClient: func(llm.Profile) (llm.ChatClient, error) { return nil, nil }})
	if err != nil {
		t.Fatal(err)
	}
	sess := newSession(t, e)
	ctx := WithSession(context.Background(), sess)
	denied := func() []string {
		var out []string
		for _, d := range e.ShellPolicy(ctx, t.TempDir(), nil).Deny {
			out = append(out, d.Path)
		}
		return out
	}
	if got := denied(); !slices.Contains(got, "/srv/secret") || !slices.Contains(got, filepath.Dir(store.Path())) {
		t.Fatalf("denied %q, want /srv/secret and the vault's folder", got)
	}
	deny = []string{"/srv/other"}
	if got := denied(); slices.Contains(got, "/srv/secret") || !slices.Contains(got, "/srv/other") {
		t.Fatalf("after the list changed, denied %q", got)
	}
	if p := e.ShellPolicy(ctx, "", nil); p.Off || !strings.HasPrefix(p.Describe(), "reads: everything but ") {
		t.Fatalf("default profile: %s", p.Describe())
	}
	off := false
	if err := e.SaveProfile(llm.Profile{Name: "loose", Provider: llm.ProviderOpenAI, Model: "m", Sandbox: &off}); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.UseProfile("loose"); err != nil {
		t.Fatal(err)
	}
	if p := e.ShellPolicy(ctx, "", nil); !p.Off {
		t.Fatalf("a profile with sandbox = false: %s", p.Describe())
	}
}
