package vault_test

import (
	"fmt"
	"os"
	"path/filepath"

	"tai/vault"
)

func Example() {
	dir, _ := os.MkdirTemp("", "vault-example")
	defer os.RemoveAll(dir)

	s, err := vault.Open(filepath.Join(dir, "vault.db"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	_ = s.SecretSet("github-token", "ghp_example_value", nil)
	s.AddRedaction("API_KEY", "sk-from-the-environment")
	fmt.Println(s.Redact("token ghp_example_value, key sk-from-the-environment"))

	id, _ := s.RecordPut("a long tool result", map[string]any{"tool": "read"})
	part, rec, _ := s.RecordGet(id, 2, 4)
	fmt.Println(id, rec.Size, part)

	_, _ = s.AuditAppend(vault.AuditEntry{Kind: "tool", Subject: "read", Outcome: "ok"})
	n, err := s.AuditVerify()
	fmt.Println(n, err)
	// Output:
	// token [REDACTED:github-token], key [REDACTED:API_KEY]
	// r1 18 long
	// 1 <nil>
}
