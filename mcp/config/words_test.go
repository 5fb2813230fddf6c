package config

import (
	"slices"
	"strings"
	"testing"
)

func TestSplitWords(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		want       []string
		err        string // a substring of the error, when one is wanted
	}{
		{name: "quotes and escapes", line: `npx -y "my pkg" 'it''s' a\ b "q\"x" --k=v`,
			want: []string{"npx", "-y", "my pkg", "its", "a b", `q"x`, "--k=v"}},
		{name: "blanks", line: " a\t b\n c ", want: []string{"a", "b", "c"}},
		{name: "empty", line: "  ", want: nil},
		{name: "empty quotes are a word", line: `a "" ''`, want: []string{"a", "", ""}},
		{name: "variables stay", line: `srv $HOME "${TOKEN}"`, want: []string{"srv", "$HOME", "${TOKEN}"}},
		{name: "backslash in double quotes", line: `"a\$b\\c\d"`, want: []string{`a$b\c\d`}},
		{name: "backslash-newline in double quotes", line: "\"a\\\nb\"", want: []string{"a\nb"}},
		{name: "trailing backslash", line: `a\`, want: []string{"a"}},
		{name: "placeholder kept", line: "a <token> b", want: []string{"a", "<token>", "b"}},
		{name: "placeholder inside a word", line: "--key=<YOUR_KEY>x", want: []string{"--key=<YOUR_KEY>x"}},
		{name: "single quote open", line: "npx 'open", err: "single quote (') is left open"},
		{name: "double quote open", line: `npx "open`, err: `double quote (") is left open`},
		{name: "and", line: "cd x && npx y", err: `shell operator "&"`},
		{name: "pipe", line: "srv | tee log", err: `shell operator "|"`},
		{name: "redirection", line: "srv > log", err: `shell operator ">"`},
		{name: "input redirection", line: "srv < in", err: `shell operator "<"`},
		{name: "empty angle brackets", line: "srv <>", err: `shell operator "<"`},
		{name: "command substitution", line: "echo $(id)", err: `shell operator "$("`},
		{name: "backquote", line: "echo `id`", err: "shell operator \"`\""},
		{name: "command in double quotes", line: `sh -c "echo $(id)"`, err: "runs a command inside quotes"},
		{name: "subshell", line: "(srv)", err: `shell operator "("`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SplitWords(tc.line)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("SplitWords(%q) = %q, %v; want an error with %q", tc.line, got, err, tc.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("SplitWords(%q) = %q, %v; want %q", tc.line, got, err, tc.want)
			}
		})
	}
}
