package lua

import (
	"strings"
	"testing"

	"tai/engine/tool"
)

func TestDiffAndEstimate(t *testing.T) {
	h, _, _ := modelHost(t, tool.Interactive)
	got := mustRun(t, h, `return tai.diff("a\nb\n", "a\nc\n"), tai.estimate_tokens(string.rep("x", 400)), tai.estimate_tokens({{role = "user", content = string.rep("y", 40)}})`)
	if !strings.Contains(got[0].(string), "-b\n+c\n") || got[1] != int64(104) || got[2] != int64(14) {
		t.Fatalf("got %q", got)
	}
}
