package tool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"tai/vault"
	"tai/vault/secret"
)

// hiddenArg replaces a sensitive argument's value wherever arguments are
// shown.
const hiddenArg = vault.Hidden

// ShownArgs returns args as they may be shown to a person: sensitive
// arguments hidden and known secret values redacted (inside every string,
// however the arguments are later encoded). args is not modified.
// When the vault's secrets cannot be read, every string that could hold
// one is withheld.
func (r *Registry) ShownArgs(t Tool, args map[string]any) map[string]any {
	return shownArgs(r.redactFunc(), t, args)
}

// CallDigest is the digest of a call as consent shows it and the audit
// trail keeps it: over the shown arguments, so neither a sensitive value
// nor a known secret can be recovered from it by hashing guesses.
func (r *Registry) CallDigest(t Tool, args map[string]any) string {
	return Digest(r.ShownArgs(t, args))
}

func shownArgs(redact func(string) string, t Tool, args map[string]any) map[string]any {
	out := make(map[string]any, len(args))
	for k, v := range args {
		out[k] = v
	}
	for _, k := range t.Sensitive {
		if _, ok := out[k]; ok {
			out[k] = hiddenArg
		}
	}
	shown, _ := vault.RedactValue(redact, out)
	return shown.(map[string]any)
}

// Redact redacts one string with the current Redactor; withheld whole
// when the secrets cannot be read. A result takes one Redactor for all its
// strings instead.
func (r *Registry) Redact(s string) string {
	return r.redactFunc()(s)
}

// redactFunc returns the current Redactor's Redact, or, when the secrets
// cannot be read, a function that withholds every string long enough to
// hold one.
func (r *Registry) redactFunc() func(string) string {
	red, err := r.store.Redactor()
	if err != nil {
		return withholdAll(err)
	}
	return red.Redact
}

// MaxErrorText caps the text of a tool's failure that goes back to the
// model (a server's JSON-RPC error message can be megabytes): results are
// spilled to records, errors are cut.
const MaxErrorText = 8 << 10

// cutError cuts error text, redacted by red, to MaxErrorText, saying how
// much was dropped; a [REDACTED:name] mark red wrote is never cut in two
// (see vault.Redactor.Cut).
func cutError(red *vault.Redactor, text string) string {
	if len(text) <= MaxErrorText {
		return text
	}
	n := red.Cut(text, MaxErrorText)
	// Not inside a character: back to its first byte.
	for i := 1; i < utf8.UTFMax && n > 0 && !utf8.RuneStart(text[n]); i++ {
		n--
	}
	kept := text[:n]
	return fmt.Sprintf("%s … (%d bytes more were cut)", kept, len(text)-len(kept))
}

// withholdAll returns a redaction that withholds every string that could
// hold a secret, naming err.
func withholdAll(err error) func(string) string {
	note := vault.Withheld(err)
	return func(s string) string {
		if len(s) < secret.MinLen {
			return s
		}
		return note
	}
}

// redactResult redacts every item of res with redact.
func redactResult(redact func(string) string, res Result) Result {
	out := Result{IsError: res.IsError, Content: make([]Content, len(res.Content))}
	for i, c := range res.Content {
		c.Text = redact(c.Text)
		if len(c.Raw) > 0 {
			c.Raw = redactJSON(redact, c.Raw)
		}
		out.Content[i] = c
	}
	return out
}

// redactJSON redacts every string (keys too) inside a JSON value. The JSON
// text itself cannot be redacted as text: an encoder may have escaped a
// secret's & < > (as \u0026…), hiding it from a plain match. Numbers keep
// their digits. Text that is not JSON is redacted as text.
func redactJSON(redact func(string) string, raw json.RawMessage) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return json.RawMessage(redact(string(raw)))
	}
	v, changed := vault.RedactValue(redact, v)
	if !changed {
		return raw
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return json.RawMessage(redact(string(raw)))
	}
	return json.RawMessage(bytes.TrimRight(b.Bytes(), "\n"))
}

// RedactValue returns v, a JSON-like value (what a Lua tool returned, say),
// with every string in it (keys too) redacted with one look at the vault's
// secrets, before anything encodes it: an encoder may escape a secret's
// & < > and hide it from a later match. v is not modified. When the
// secrets cannot be read it returns the error naming the cause.
func (r *Registry) RedactValue(v any) (any, error) {
	red, err := r.store.Redactor()
	if err != nil {
		return nil, err
	}
	out, _ := vault.RedactValue(red.Func(), v)
	return out, nil
}
