package llm

import (
	"errors"
	"fmt"
	"strings"

	"tai/vault"
)

// ValidPassEnv checks a name a person asks to pass through to shell
// commands: a variable name, and never the vault passphrase.
func ValidPassEnv(name string) error {
	if name == "" {
		return errors.New("pass_env: a variable name is empty")
	}
	for i, r := range name {
		if !(r == '_' || (r >= 'A' && r <= 'Z') || (r >= 'a' && r <= 'z') || (i > 0 && r >= '0' && r <= '9')) {
			return fmt.Errorf("pass_env: %q is not an environment variable name (letters, digits and '_', not starting with a digit)", name)
		}
	}
	if strings.ToUpper(name) == vault.PassphraseEnv {
		return fmt.Errorf("pass_env: %s is never passed to commands", vault.PassphraseEnv)
	}
	return nil
}
