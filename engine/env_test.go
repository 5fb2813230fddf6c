package engine

import (
	"context"
	"strings"
	"testing"
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
	store := openStore(t)
	if err := SaveProfile(store, Profile{Name: "router", Provider: ProviderOpenAI, Model: "m", KeyEnv: "ROUTER_TOKEN"}); err != nil {
		t.Fatal(err)
	}
	e, err := New(store, &Options{Mode: Yolo, Dir: t.TempDir(), Getenv: noEnv, NewClient: func(Profile) (ChatClient, error) { return nil, nil }})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Dispatch(context.Background(), "shell", map[string]any{"command": "env"})
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
	if err := e.SaveProfile(Profile{Name: "later", Provider: ProviderOpenAI, Model: "m", KeyEnv: "LATER_SECRET"}); err != nil {
		t.Fatal(err)
	}
	res, err = e.Dispatch(context.Background(), "shell", map[string]any{"argv": []any{"env"}})
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
