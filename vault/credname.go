package vault

import "strings"

// scrubWords are the parts of an environment variable's name that mark it
// as a credential: the commands tai runs never see such a variable unless
// a person passes it through by name. AUTH is not one: SSH_AUTH_SOCK must
// pass.
var scrubWords = []string{"KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL"}

// CredentialName reports whether an environment variable's name says it
// holds a credential: the vault passphrase's (TAI_VAULT_PASSPHRASE), or
// one holding KEY, SECRET, TOKEN, PASSWORD, PASSWD or CREDENTIAL, in any
// case.
func CredentialName(name string) bool {
	up := strings.ToUpper(name)
	if up == PassphraseEnv {
		return true
	}
	for _, w := range scrubWords {
		if strings.Contains(up, w) {
			return true
		}
	}
	return false
}
