package secret

import (
	"strings"
	"unicode"
)

// credentialParts mark a word of a variable's name as a credential's
// wherever they appear in it: long enough never to be part of an ordinary
// word (DB_PASSWORD, APIKEY, GOOGLE_APPLICATION_CREDENTIALS).
var credentialParts = []string{"SECRET", "TOKEN", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL",
	"APIKEY", "ACCESSKEY", "PRIVATEKEY", "AUTHORIZATION"}

// credentialWords mark a name as a credential's only as whole words: as
// parts they are inside ordinary words (PAT in PATH, KEY in MONKEY, AUTH
// in AUTHOR).
var credentialWords = []string{"KEY", "KEYS", "PAT", "AUTH", "PASS"}

// CredentialName reports whether an environment variable's name says it
// holds a credential: one with a word holding SECRET, TOKEN, PASSWORD,
// PASSWD, PASSPHRASE (TAI_VAULT_PASSPHRASE), CREDENTIAL, APIKEY,
// ACCESSKEY, PRIVATEKEY or AUTHORIZATION, or one with
// the whole word KEY, KEYS, PAT, AUTH or PASS (OPENAI_API_KEY, GITHUB_PAT,
// githubPat), in any case. Words are split at anything but letters and
// digits and where a lower-case letter meets an upper-case one. A name
// whose last word is SOCK or SOCKET names a socket, not a secret
// (SSH_AUTH_SOCK). This is tai's one rule for credential names: the
// shell's environment, redaction, the consent screen and key_env all
// read names through it.
func CredentialName(name string) bool {
	words := nameWords(name)
	if len(words) == 0 {
		return false
	}
	if last := words[len(words)-1]; last == "SOCK" || last == "SOCKET" {
		return false
	}
	for _, w := range words {
		for _, p := range credentialParts {
			if strings.Contains(w, p) {
				return true
			}
		}
		for _, c := range credentialWords {
			if w == c {
				return true
			}
		}
	}
	return false
}

// nameWords splits a variable's name into upper-case words: at every
// character that is not a letter or a digit, and before an upper-case
// letter that follows a lower-case one (githubPat: GITHUB, PAT).
func nameWords(name string) []string {
	var words []string
	var cur []rune
	prevLower := false
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToUpper(string(cur)))
			cur = cur[:0]
		}
	}
	for _, r := range name {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
			prevLower = false
			continue
		case unicode.IsUpper(r) && prevLower:
			flush()
		}
		cur = append(cur, r)
		prevLower = unicode.IsLower(r)
	}
	flush()
	return words
}
