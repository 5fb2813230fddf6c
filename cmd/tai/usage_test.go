package main

import (
	"flag"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"
)

// definedFlags is every flag the command line parser knows, walked from the
// flag set itself.
func definedFlags() map[string]bool {
	out := map[string]bool{}
	newFlags(&options{}, io.Discard).VisitAll(func(f *flag.Flag) { out[f.Name] = true })
	return out
}

// optionLine is a line of --help's Options: two spaces, then the flags.
var optionLine = regexp.MustCompile(`^  (-{1,2}[a-z][a-z-]*)(?:, (-{1,2}[a-z][a-z-]*))?(?: [A-Z\[][^ ]*)? {2,}\S`)

// helpFlags reads the flags --help's Options section lists, and what is
// wrong with its shape: a flag on two lines, a line that goes on below,
// a line over 80 columns anywhere in the text.
func helpFlags(text string) (map[string]bool, []string) {
	flags := map[string]bool{}
	var problems []string
	in := false
	for i, l := range strings.Split(text, "\n") {
		if n := utf8.RuneCountInString(l); n > 80 {
			problems = append(problems, fmt.Sprintf("--help's line %d is %d columns, over 80: %q", i+1, n, l))
		}
		switch {
		case l == "Options:":
			in = true
			continue
		case in && l == "":
			in = false
		}
		if !in {
			continue
		}
		m := optionLine.FindStringSubmatch(l)
		if m == nil {
			problems = append(problems, fmt.Sprintf("--help's Options line %q is not one flag and what it does (a flag takes one line)", l))
			continue
		}
		for _, f := range m[1:] {
			name := strings.TrimLeft(f, "-")
			if name == "" {
				continue
			}
			if flags[name] {
				problems = append(problems, fmt.Sprintf("--help lists -%s twice", name))
			}
			flags[name] = true
		}
	}
	return flags, problems
}

// spanFlag is a flag inside a backquoted span of the manual.
var spanFlag = regexp.MustCompile("(?:^|[\\s\\[(`])(-{1,2}[a-z][a-z-]*)")

// flagDrift compares the two lists both ways and names each flag one of
// them lacks. (The manual's cli topic is compared with the parser in
// topics_drift_test.go.)
func flagDrift(defined, help map[string]bool) []string {
	var problems []string
	missing := func(from map[string]bool, in map[string]bool, what string) {
		var names []string
		for f := range from {
			if !in[f] {
				names = append(names, f)
			}
		}
		sort.Strings(names)
		for _, f := range names {
			problems = append(problems, fmt.Sprintf("%s: -%s", what, f))
		}
	}
	missing(defined, help, "--help does not list a flag tai parses")
	missing(help, defined, "--help lists a flag tai does not parse")
	return problems
}

// TestHelpNamesEveryFlag: --help lists every flag the parser defines, one
// line each, no more and no fewer.
func TestHelpNamesEveryFlag(t *testing.T) {
	defined := definedFlags()
	if len(defined) < 10 {
		t.Fatalf("the flag set defines only %v", defined)
	}
	help, problems := helpFlags(usage)
	for _, p := range append(problems, flagDrift(defined, help)...) {
		t.Error(p)
	}
}

// TestFlagDriftIsFound: a flag added to the parser, dropped from --help,
// or listed but gone, is reported by name; so is a flag's second line in
// --help.
func TestFlagDriftIsFound(t *testing.T) {
	defined := definedFlags()
	help, _ := helpFlags(usage)
	without := func(m map[string]bool, name string) map[string]bool {
		out := map[string]bool{}
		for k, v := range m {
			if k != name {
				out[k] = v
			}
		}
		return out
	}
	with := func(m map[string]bool, name string) map[string]bool {
		out := without(m, "")
		out[name] = true
		return out
	}
	tests := []struct {
		name          string
		defined, help map[string]bool
		want          string
	}{
		{"a new flag", with(defined, "sandbox"), help, "--help does not list a flag tai parses: -sandbox"},
		{"a flag gone", without(defined, "clean"), help, "--help lists a flag tai does not parse: -clean"},
		{"help drops one", defined, without(help, "vault"), "--help does not list a flag tai parses: -vault"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(flagDrift(tc.defined, tc.help), "\n")
			if !strings.Contains(got, tc.want) {
				t.Errorf("want %q, got:\n%s", tc.want, got)
			}
		})
	}
	_, problems := helpFlags(strings.Replace(usage, "  --clean             ignore your init.lua and lua/ overrides\n",
		"  --clean             ignore your init.lua\n                      and lua/ overrides\n", 1))
	if !strings.Contains(strings.Join(problems, "\n"), "a flag takes one line") {
		t.Errorf("a flag's second line is not reported: %v", problems)
	}
	if _, problems := helpFlags(usage + strings.Repeat("x", 81) + "\n"); len(problems) == 0 {
		t.Error("a line over 80 columns is not reported")
	}
}

// TestHelpTellsAutoFromYolo: --help says what --yolo does that --auto does
// not, rather than calling them the same.
func TestHelpTellsAutoFromYolo(t *testing.T) {
	var auto, yolo string
	for _, l := range strings.Split(usage, "\n") {
		switch {
		case strings.HasPrefix(strings.TrimSpace(l), "--auto "):
			auto = l
		case strings.HasPrefix(strings.TrimSpace(l), "--yolo "):
			yolo = l
		}
	}
	if auto == "" || yolo == "" || strings.Contains(yolo, "the same") || !strings.Contains(yolo, "without showing") {
		t.Fatalf("--auto and --yolo in --help:\n%s\n%s", auto, yolo)
	}
}
