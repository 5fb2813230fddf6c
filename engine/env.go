package engine

import (
	"errors"
	"os"
	"strings"

	"tai/vault"
)

// vaultPassphraseEnv is the variable tai reads the vault passphrase from.
const vaultPassphraseEnv = "TAI_VAULT_PASSPHRASE"

// credentialEnv reports whether the environment variable name may hold a
// credential that commands the model runs must not see: the vault
// passphrase, any *_API_KEY, or a profile's key_env (in keyEnvs).
func credentialEnv(name string, keyEnvs map[string]bool) bool {
	up := strings.ToUpper(name)
	return up == vaultPassphraseEnv || up == "API_KEY" || strings.HasSuffix(up, "_API_KEY") || keyEnvs[name]
}

// keyEnvs returns the key_env of every stored profile and of the current
// one.
func (e *Engine) keyEnvs() map[string]bool {
	out := map[string]bool{}
	// A stored profile from before ValidKeyEnv may name HOME or PATH; such
	// a name holds no key, and stripping it would break the shell.
	if p := e.Profile(); p.KeyEnv != "" && ValidKeyEnv(p.KeyEnv) == nil {
		out[p.KeyEnv] = true
	}
	// A vault that cannot list its profiles still leaves the fixed names
	// stripped; the current profile is covered above.
	if ps, err := ListProfiles(e.store); err == nil {
		for _, p := range ps {
			if p.KeyEnv != "" && ValidKeyEnv(p.KeyEnv) == nil {
				out[p.KeyEnv] = true
			}
		}
	}
	return out
}

// shellEnv returns tai's environment without the credential variables,
// for the commands the shell tool runs.
func (e *Engine) shellEnv() []string {
	keyEnvs := e.keyEnvs()
	env := os.Environ()
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !credentialEnv(name, keyEnvs) {
			out = append(out, kv)
		}
	}
	return out
}

// redactEnv makes the vault redact the values of the credential variables
// (as the process and Options.Getenv see them), so a file, a page or an
// error that repeats one never shows it.
func (e *Engine) redactEnv() {
	keyEnvs := e.keyEnvs()
	names := map[string]bool{vaultPassphraseEnv: true}
	for n := range keyEnvs {
		names[n] = true
	}
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); credentialEnv(name, keyEnvs) {
			names[name] = true
		}
	}
	for n := range names {
		e.store.AddRedaction(n, os.Getenv(n))
		e.store.AddRedaction(n, e.getenv(n))
	}
}

// redactionReady refuses when the vault holds sealed secrets it cannot
// decrypt, since Redact would then let them through. Other vault errors
// are left to the operation itself (Redact keeps what it already knows and
// a failed audit append is reported with the call).
func redactionReady(s *vault.Store) error {
	err := s.RedactionReady()
	if errors.Is(err, vault.ErrNoPassphrase) || errors.Is(err, vault.ErrWrongPassphrase) {
		return err
	}
	return nil
}
