package engine

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"

	"tai/engine/llm"
	"tai/vault"
	"tai/vault/secret"
)

// credentialEnv reports whether the environment variable name may hold a
// credential that commands the model runs must not see: one the
// credential words say holds one (Options.CredentialWords), or a
// profile's key_env (in keyEnvs).
func (e *Engine) credentialEnv(name string, keyEnvs map[string]bool) bool {
	return keyEnvs[name] || e.credentials().Name(name)
}

// credentials is the rule for credential names in force.
func (e *Engine) credentials() secret.Credentials {
	if e.credWords != nil {
		if w := e.credWords(); w != nil {
			return w
		}
	}
	return secret.CredentialWords()
}

// PassEnv lets shell commands see the named variables although their
// names look like credentials (GH_TOKEN for gh, say). Their values stay
// registered for redaction, so output that repeats one still hides it.
// Set it from init.lua with tai.pass_env, or per profile (pass_env).
func (e *Engine) PassEnv(names ...string) error {
	for _, n := range names {
		if err := llm.ValidPassEnv(n); err != nil {
			return err
		}
	}
	e.passMu.Lock()
	defer e.passMu.Unlock()
	if e.passEnv == nil {
		e.passEnv = map[string]bool{}
	}
	for _, n := range names {
		e.passEnv[n] = true
	}
	return nil
}

// passed reports whether name was passed through by a person: with
// PassEnv, or in the pass_env of p (the calling session's profile).
func (e *Engine) passed(name string, p llm.Profile) bool {
	e.passMu.Lock()
	ok := e.passEnv[name]
	e.passMu.Unlock()
	return ok || slices.Contains(p.PassEnv, name)
}

// keyEnvs returns the key_env of every stored profile and of the current
// one.
func (e *Engine) keyEnvs() map[string]bool {
	out := map[string]bool{}
	// A stored profile from before ValidKeyEnv may name HOME or PATH; such
	// a name holds no key, and stripping it would break the shell.
	if p := e.Profile(); p.KeyEnv != "" && llm.ValidKeyEnv(p.KeyEnv) == nil {
		out[p.KeyEnv] = true
	}
	// A vault that cannot list its profiles still leaves the fixed names
	// stripped; the current profile is covered above.
	if ps, err := llm.ListProfiles(e.store); err == nil {
		for _, p := range ps {
			if p.KeyEnv != "" && llm.ValidKeyEnv(p.KeyEnv) == nil {
				out[p.KeyEnv] = true
			}
		}
	}
	return out
}

// shellEnv returns tai's environment without the credential variables
// (those a person passed through by name excepted), for the commands the
// shell tool runs.
func (e *Engine) shellEnv(ctx context.Context) []string {
	keyEnvs := e.keyEnvs()
	p := e.Profile()
	if s, ok := SessionFrom(ctx); ok {
		p = s.Profile()
	}
	env := os.Environ()
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !e.credentialEnv(name, keyEnvs) || (e.passed(name, p) && !strings.EqualFold(name, vault.PassphraseEnv)) {
			out = append(out, kv)
		}
	}
	return out
}

// redactEnv makes the vault redact the values of the credential variables
// (as the process and Options.Getenv see them) and the userinfo of the
// profile's base URL, so a file, a page or an error that repeats one never
// shows it.
func (e *Engine) redactEnv() {
	llm.RedactUserinfo(e.store, e.Profile().BaseURL)
	keyEnvs := e.keyEnvs()
	names := map[string]bool{vault.PassphraseEnv: true}
	for n := range keyEnvs {
		names[n] = true
	}
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); e.credentialEnv(name, keyEnvs) {
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
