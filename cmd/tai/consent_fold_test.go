package main

import (
	"strings"
	"testing"

	"tai/engine/llm/llmtest"
)

// TestConsentShowsTheEndOfALongCall: whatever pads a call, the consent
// screen shows its end before s is pressed: a run of blanks is counted
// ("⟨3000 spaces⟩"), a long text shows its last lines with a count of
// those between, for a shell command, a file's content and a URL alike.
func TestConsentShowsTheEndOfALongCall(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(fromToolResults)
	s := startREPLIn(t, e.root, e.modelVars(srv))
	s.expect("tai:default> ")
	tests := []struct {
		tool, args string
		want       []string
	}{
		{"shell", `{"command":"echo hello` + strings.Repeat(" ", 3000) + `; touch /tmp/x"}`,
			[]string{"echo hello⟨3000 spaces⟩; touch /tmp/x"}},
		{"shell", `{"command":"` + strings.Repeat(`echo hi\n`, 500) + `touch /tmp/payload"}`,
			[]string{"lines not shown ⋯", "│ touch /tmp/payload"}},
		{"shell", `{"command":"echo ` + strings.Repeat("A", 100<<10) + `; touch /tmp/long"}`,
			[]string{"bytes not shown …⟩", "; touch /tmp/long"}},
		{"write_file", `{"path":"new.txt","content":"a` + strings.Repeat(`\t`, 500) + `PAYLOAD\n"}`,
			[]string{"+a⟨500 tabs⟩PAYLOAD"}},
		{"http_fetch", `{"url":"https://example.com/?` + strings.Repeat(`\u200b`, 900) + `&steal=1"}`,
			[]string{"?⟨900 × \\u200b⟩&steal=1"}},
	}
	for _, tt := range tests {
		srv.Push(llmtest.Calls(llmtest.Call(tt.tool, tt.args)))
		s.typeKeys("go\r")
		s.expect("wants to run")
		for _, w := range tt.want {
			s.expect(w)
		}
		s.expect("[s]how everything: ")
		s.typeKeys("n")
		s.expect("tai:default> ")
	}
}
