package lua

import (
	"io/fs"
	"regexp"
	"testing"

	"tai/stdlib"
	"tai/vault"
)

// TestOutcomesAreOneTable: tai.outcome holds the outcome words Go
// declares (vault.Outcomes), and stdlib/meta/tai.lua describes each with
// the same word.
func TestOutcomesAreOneTable(t *testing.T) {
	h := newHost(t, Options{}, nil)
	src, err := fs.ReadFile(stdlib.Meta(), "meta/tai.lua")
	if err != nil {
		t.Fatal(err)
	}
	meta := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^tai\.outcome\.(\w+) = "(\w+)"$`).FindAllStringSubmatch(string(src), -1) {
		meta[m[1]] = m[2]
	}
	want := vault.Outcomes()
	if len(meta) != len(want) {
		t.Errorf("meta/tai.lua describes %d outcomes, Go declares %d", len(meta), len(want))
	}
	for name, word := range want {
		got := mustRunOne(t, h, `return tai.outcome.`+name)
		if got != word || meta[name] != word {
			t.Errorf("tai.outcome.%s = %v, meta says %q, Go declares %q", name, got, meta[name], word)
		}
	}
}

func mustRunOne(t *testing.T, h *testHost, chunk string) any {
	t.Helper()
	got, err := h.DoString(ctxT(t), chunk, "test")
	if err != nil || len(got) != 1 {
		t.Fatalf("%s: %v %v", chunk, got, err)
	}
	return got[0]
}
