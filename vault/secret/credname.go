package secret

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// credentialWords are the words that mark a variable's name as a
// credential's, by default. "*W*" marks a name one of whose words holds
// W anywhere: W is long enough never to be part of an ordinary word
// (DB_PASSWORD, APIKEY, GOOGLE_APPLICATION_CREDENTIALS). A bare W marks
// it only as a whole word: as a part it is inside ordinary words (PAT in
// PATH, KEY in MONKEY, AUTH in AUTHOR).
var credentialWords = []string{"*SECRET*", "*TOKEN*", "*PASSWORD*", "*PASSWD*", "*PASSPHRASE*", "*CREDENTIAL*",
	"*APIKEY*", "*ACCESSKEY*", "*PRIVATEKEY*", "*AUTHORIZATION*", "KEY", "KEYS", "PAT", "AUTH", "PASS"}

// CredentialWords returns the default list of the words that mark a
// credential's name (see Credentials).
func CredentialWords() []string { return slices.Clone(credentialWords) }

// Credentials is a rule for credential names: the words that mark one,
// "*W*" for a word holding W, a bare W for W as a whole word, both in
// upper case (CredentialWords is the default; ParseCredentialWord checks
// one).
type Credentials []string

// ParseCredentialWord checks w as a word of a Credentials list and
// returns it in upper case: letters and digits, as "W" or "*W*".
func ParseCredentialWord(w string) (string, error) {
	inner := w
	if strings.HasPrefix(w, "*") && strings.HasSuffix(w, "*") && len(w) > 2 {
		inner = w[1 : len(w)-1]
	}
	if inner == "" || strings.ContainsFunc(inner, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		return "", fmt.Errorf("%q is not a credential word: write letters and digits, as KEY (a whole word) or *TOKEN* (anywhere in a word)", w)
	}
	return strings.ToUpper(w), nil
}

// CredentialName reports whether an environment variable's name says it
// holds a credential, by the default words (CredentialWords): one with a
// word holding SECRET, TOKEN, PASSWORD, PASSWD, PASSPHRASE
// (TAI_VAULT_PASSPHRASE), CREDENTIAL, APIKEY, ACCESSKEY, PRIVATEKEY or
// AUTHORIZATION, or one with the whole word KEY, KEYS, PAT, AUTH or PASS
// (OPENAI_API_KEY, GITHUB_PAT, githubPat), in any case. See
// Credentials.Name.
func CredentialName(name string) bool { return Credentials(credentialWords).Name(name) }

// Name reports whether name says it holds a credential by the words of c.
// Words are split at anything but letters and digits and where a
// lower-case letter meets an upper-case one. A name whose last word is
// SOCK or SOCKET names a socket, not a secret (SSH_AUTH_SOCK). This is
// tai's one rule for credential names: the shell's environment,
// redaction, the consent screen and key_env all read names through it.
func (c Credentials) Name(name string) bool {
	words := nameWords(name)
	if len(words) == 0 {
		return false
	}
	if last := words[len(words)-1]; last == "SOCK" || last == "SOCKET" {
		return false
	}
	for _, w := range words {
		for _, m := range c {
			if part, ok := strings.CutPrefix(m, "*"); ok && len(m) > 2 {
				if strings.Contains(w, strings.TrimSuffix(part, "*")) {
					return true
				}
			} else if w == m {
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
