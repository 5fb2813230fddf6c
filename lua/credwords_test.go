package lua

import (
	"reflect"
	"strings"
	"testing"

	"tai/engine/tool"
	"tai/vault/secret"
)

// TestCredentialWords: tai.vault.credential_words is the default list
// until a script sets one; then tai.vault.credential_name, and the
// consent screen's hiding of values, follow the list set, whole words
// kept whole. A word that is not one is refused, naming it.
func TestCredentialWords(t *testing.T) {
	h, _, _ := modelHost(t, tool.Interactive)
	got := mustRun(t, h, `
		local before = tai.vault.credential_words()
		local path_before, pat_before = tai.vault.credential_name("MEMORY_FILE_PATH"), tai.vault.credential_name("GITHUB_PAT")
		local set = tai.vault.credential_words{"*token*", "Shh"}
		local asked
		tai.prompter{confirm = function() return false end, ask = function(q) asked = q return "n" end}
		tai.mcp.add{source = tai.json.encode{mcpServers = {s = {command = "srv", env = {MY_SHH = "hush-value", GITHUB_PAT = "pat-value"}}}}}
		return table.concat(before, ","), path_before, pat_before, table.concat(set, ","),
			tai.vault.credential_name("MY_SHH"), tai.vault.credential_name("SHHH"), tai.vault.credential_name("GITHUB_PAT"),
			tai.vault.credential_name("mytokens"), asked`)
	if got[0] != strings.Join(secret.CredentialWords(), ",") || got[1] != false || got[2] != true {
		t.Errorf("before: %v", got[:3])
	}
	if want := []any{"*TOKEN*,SHH", true, false, false, true}; !reflect.DeepEqual(got[3:8], want) {
		t.Errorf("after: %v, want %v", got[3:8], want)
	}
	q, _ := got[8].(string)
	if !strings.Contains(q, "GITHUB_PAT=pat-value") || strings.Contains(q, "hush-value") || !strings.Contains(q, "MY_SHH  (value not shown: a secret)") {
		t.Errorf("the consent screen does not follow the list:\n%s", q)
	}
	if _, err := h.DoString(ctxT(t), `tai.vault.credential_words{"API_KEY"}`, "t"); err == nil || !strings.Contains(err.Error(), `"API_KEY" is not a credential word`) {
		t.Errorf("a bad word: %v", err)
	}
}
