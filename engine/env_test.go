package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tai/engine/llm"
	"tai/engine/tool"
	"tai/vault"
	"tai/vault/vaulttest"
)

func TestShellEnvironmentHoldsNoCredentials(t *testing.T) {
	creds := map[string]string{
		"TAI_VAULT_PASSPHRASE": "vault-pass-phrase-1",
		"ANTHROPIC_API_KEY":    "sk-ant-env-key-2",
		"my_api_key":           "lower-case-key-3",
		"ROUTER_TOKEN":         "router-token-value-4", // a profile's key_env
	}
	for k, v := range creds {
		t.Setenv(k, v)
	}
	t.Setenv("TAI_PLAIN_SETTING", "kept-value")
	store := vaulttest.Open(t)
	if err := llm.SaveProfile(store, llm.Profile{Name: "router", Provider: llm.ProviderOpenAI, Model: "m", KeyEnv: "ROUTER_TOKEN"}); err != nil {
		t.Fatal(err)
	}
	e, err := New(store, &Options{Mode: tool.Yolo, Dir: t.TempDir(), Getenv: noEnv, NewClient: func(llm.Profile) (llm.ChatClient, error) { return nil, nil }})
	if err != nil {
		t.Fatal(err)
	}
	res, err := newSession(t, e).Dispatch(context.Background(), "shell", map[string]any{"command": "env"})
	if err != nil {
		t.Fatal(err)
	}
	out := res.Text()
	if !strings.Contains(out, "TAI_PLAIN_SETTING=kept-value") {
		t.Errorf("ordinary variables must be passed on:\n%s", out)
	}
	for k, v := range creds {
		if strings.Contains(out, k+"=") || strings.Contains(out, v) {
			t.Errorf("the shell saw %s:\n%s", k, out)
		}
		// Whatever else shows a value (a file, a fetched page) is redacted.
		if got := store.Redact("x " + v + " y"); strings.Contains(got, v) {
			t.Errorf("%s's value is not redacted: %q", k, got)
		}
	}
	// A profile saved later has its key_env stripped too.
	t.Setenv("LATER_SECRET", "later-secret-value-5")
	if err := e.SaveProfile(llm.Profile{Name: "later", Provider: llm.ProviderOpenAI, Model: "m", KeyEnv: "LATER_SECRET"}); err != nil {
		t.Fatal(err)
	}
	res, err = newSession(t, e).Dispatch(context.Background(), "shell", map[string]any{"argv": []any{"env"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Text(), "LATER_SECRET") {
		t.Errorf("the shell saw a later profile's key_env:\n%s", res.Text())
	}
	if got := store.Redact("later-secret-value-5"); got == "later-secret-value-5" {
		t.Errorf("a later profile's key is not redacted")
	}
}

func TestSealedVaultWithoutKeyRefusesTurnsAndTools(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vault.db")
	s, err := vault.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SecretSet("db-password", "sealed-db-password-1", nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Seal("seal-pass-phrase"); err != nil {
		t.Fatal(err)
	}
	locked, err := vault.Open(path, nil) // no passphrase source
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "leak.txt"), []byte("password=sealed-db-password-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	client := &scripted{steps: []func(context.Context, llm.Request, func(string)) (llm.Response, error){say("should not be asked")}}
	e, err := New(locked, &Options{Mode: tool.Yolo, Dir: dir, Getenv: noEnv, NewClient: func(llm.Profile) (llm.ChatClient, error) { return client, nil }})
	if err != nil {
		t.Fatal(err)
	}
	res, err := newSession(t, e).Dispatch(context.Background(), "read_file", map[string]any{"path": "leak.txt"})
	if !errors.Is(err, vault.ErrNoPassphrase) || !strings.Contains(err.Error(), "TAI_VAULT_PASSPHRASE") {
		t.Fatalf("Dispatch = %q, %v; want a refusal naming TAI_VAULT_PASSPHRASE", res.Text(), err)
	}
	if strings.Contains(res.Text()+err.Error(), "sealed-db-password") {
		t.Fatalf("the sealed secret leaked: %q %v", res.Text(), err)
	}
	if _, err := newSession(t, e).NewAgent(nil).RunTurn(context.Background(), "read leak.txt", nil); !errors.Is(err, vault.ErrNoPassphrase) {
		t.Fatalf("RunTurn err = %v, want a refusal", err)
	}
	if _, err := newSession(t, e).Complete(context.Background(), []llm.Message{{Role: "user", Content: "hi"}}); !errors.Is(err, vault.ErrNoPassphrase) {
		t.Fatalf("Complete err = %v, want a refusal", err)
	}
	if n := len(client.requests()); n != 0 {
		t.Fatalf("the model was asked %d times", n)
	}

	// With the passphrase the same calls go through, redacted.
	open, err := vault.Open(path, &vault.Options{Passphrase: func() (string, error) { return "seal-pass-phrase", nil }})
	if err != nil {
		t.Fatal(err)
	}
	e, err = New(open, &Options{Mode: tool.Yolo, Dir: dir, Getenv: noEnv, NewClient: func(llm.Profile) (llm.ChatClient, error) { return client, nil }})
	if err != nil {
		t.Fatal(err)
	}
	res, err = newSession(t, e).Dispatch(context.Background(), "read_file", map[string]any{"path": "leak.txt"})
	if err != nil || strings.Contains(res.Text(), "sealed-db-password") || !strings.Contains(res.Text(), "[REDACTED:db-password]") {
		t.Fatalf("Dispatch with the key = %q, %v", res.Text(), err)
	}
}

// TestStoredProfileWithOrdinaryKeyEnv checks that a profile stored before
// key_env was checked, naming HOME, neither strips HOME from the shell nor
// redacts it, and that saving such a profile is refused.
func TestStoredProfileWithOrdinaryKeyEnv(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	store := vaulttest.Open(t)
	if err := store.ProfilePut("legacy", []byte(`{"provider":"openai","model":"m","key_env":"HOME"}`)); err != nil {
		t.Fatal(err)
	}
	e, err := New(store, &Options{Mode: tool.Yolo, Dir: t.TempDir(), Getenv: noEnv, NewClient: func(llm.Profile) (llm.ChatClient, error) { return nil, nil }})
	if err != nil {
		t.Fatal(err)
	}
	res, err := newSession(t, e).Dispatch(context.Background(), "shell", map[string]any{"command": "echo \"home=$HOME\""})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text(), "home="+home) {
		t.Errorf("the shell lost HOME: %q", res.Text())
	}
	if got := store.Redact(home); got != home {
		t.Errorf("HOME's value is redacted: %q", got)
	}
	err = e.SaveProfile(llm.Profile{Name: "bad", Provider: llm.ProviderOpenAI, Model: "m", KeyEnv: "PATH"})
	if err == nil || !strings.Contains(err.Error(), "key_env PATH is not an API key variable") {
		t.Errorf("saving key_env PATH: %v", err)
	}
}

// TestShellEnvironmentScrubsCredentialNames: every variable whose name
// holds KEY, SECRET, TOKEN, PASSWORD, PASSWD or CREDENTIAL is dropped from
// the shell's environment and its value redacted; everyday variables pass,
// and a person can pass a dropped one through by name (engine option,
// PassEnv, or the profile's pass_env), its value still redacted.
func TestShellEnvironmentScrubsCredentialNames(t *testing.T) {
	dropped := map[string]string{
		"GITHUB_TOKEN":                   "ghp_scrubtest0000000001",
		"AWS_SECRET_ACCESS_KEY":          "aws-secret-scrubtest-2",
		"MY_TOKEN":                       "my-token-scrubtest-3",
		"DB_PASSWORD":                    "db-password-scrubtest-4",
		"FTP_PASSWD":                     "ftp-passwd-scrubtest-5",
		"GOOGLE_APPLICATION_CREDENTIALS": "/path/to/creds-scrubtest-6.json",
		"stripe_secret":                  "stripe-secret-scrubtest-7",
		"SSH_PRIVATE_KEY_PATH":           "/keys/id-scrubtest-8",
	}
	kept := map[string]string{
		"GIT_AUTHOR_NAME": "Ada Lovelace",
		"SSH_AUTH_SOCK":   "/tmp/ssh-agent.sock",
		"EDITOR":          "vi",
		"GOPATH":          "/go-scrubtest",
	}
	for k, v := range dropped {
		t.Setenv(k, v)
	}
	for k, v := range kept {
		t.Setenv(k, v)
	}
	t.Setenv("GH_TOKEN", "gh-token-passed-9")
	t.Setenv("NPM_TOKEN", "npm-token-passed-10")
	store := vaulttest.Open(t)
	e, err := New(store, &Options{Mode: tool.Yolo, Dir: t.TempDir(), Getenv: noEnv, PassEnv: []string{"GH_TOKEN"},
		NewClient: func(llm.Profile) (llm.ChatClient, error) { return nil, nil }})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.PassEnv("NPM_TOKEN"); err != nil {
		t.Fatal(err)
	}
	sess := newSession(t, e)
	res, err := sess.Dispatch(context.Background(), "shell", map[string]any{"argv": []any{"env"}})
	if err != nil {
		t.Fatal(err)
	}
	out := res.Text()
	for k, v := range dropped {
		if strings.Contains(out, k+"=") || strings.Contains(out, v) {
			t.Errorf("the shell saw %s", k)
		}
		if got := store.Redact("x " + v + " y"); strings.Contains(got, v) {
			t.Errorf("%s's value is not redacted: %q", k, got)
		}
	}
	for k, v := range kept {
		if !strings.Contains(out, k+"="+v) {
			t.Errorf("the shell lacks %s=%s", k, v)
		}
	}
	for _, k := range []string{"GH_TOKEN", "NPM_TOKEN"} {
		if !strings.Contains(out, k+"=") {
			t.Errorf("%s was passed through by name but the shell lacks it", k)
		}
		if v := os.Getenv(k); strings.Contains(out, v) {
			t.Errorf("a passed-through value reached the output unredacted: %s", k)
		}
	}
	// A profile passes its own names through; the passphrase never.
	t.Setenv("ROUTER_TOKEN", "router-token-passed-11")
	if err := e.SaveProfile(llm.Profile{Name: "p", Provider: llm.ProviderOpenAI, Model: "m", PassEnv: []string{"ROUTER_TOKEN"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.UseProfile("p"); err != nil {
		t.Fatal(err)
	}
	res, err = sess.Dispatch(context.Background(), "shell", map[string]any{"argv": []any{"env"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text(), "ROUTER_TOKEN=") {
		t.Errorf("the profile's pass_env did not reach the shell")
	}
	if strings.Contains(e.store.Redact("router-token-passed-11"), "router-token-passed-11") {
		t.Errorf("a profile's passed-through value is not redacted")
	}
	for _, bad := range []string{"TAI_VAULT_PASSPHRASE", "tai_vault_passphrase", "1X", "A B", ""} {
		if err := e.PassEnv(bad); err == nil {
			t.Errorf("PassEnv(%q) was accepted", bad)
		}
		if err := (llm.Profile{Name: "q", Provider: llm.ProviderOpenAI, Model: "m", PassEnv: []string{bad}}).Validate(); err == nil {
			t.Errorf("a profile passing %q validated", bad)
		}
	}
}

// TestShellEnvironmentFollowsCredentialWords: the words of
// Options.CredentialWords (tai.vault.credential_words) decide which
// variables the shell's commands do not see, as they are at each command.
func TestShellEnvironmentFollowsCredentialWords(t *testing.T) {
	t.Setenv("TAI_TEST_SHH_VALUE", "hush-scrubtest-1")
	t.Setenv("TAI_TEST_TOKEN", "token-kept-2")
	words := []string{"SHH"}
	e, err := New(vaulttest.Open(t), &Options{Mode: tool.Yolo, Dir: t.TempDir(), Getenv: noEnv,
		CredentialWords: func() []string { return words },
		NewClient:       func(llm.Profile) (llm.ChatClient, error) { return nil, nil }})
	if err != nil {
		t.Fatal(err)
	}
	env := func() string {
		res, err := newSession(t, e).Dispatch(context.Background(), "shell", map[string]any{"argv": []any{"env"}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Text()
	}
	if out := env(); strings.Contains(out, "hush-scrubtest-1") || !strings.Contains(out, "TAI_TEST_TOKEN=token-kept-2") {
		t.Errorf("with SHH a credential's word, the shell saw:\n%s", out)
	}
	words = nil // the default again
	if out := env(); !strings.Contains(out, "TAI_TEST_SHH_VALUE=") || strings.Contains(out, "TAI_TEST_TOKEN=") {
		t.Errorf("with the default words, the shell saw:\n%s", out)
	}
}
