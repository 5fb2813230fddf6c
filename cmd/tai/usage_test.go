package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
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

// readmeFlagWord is a flag inside a backquoted span of README.md.
var readmeFlagWord = regexp.MustCompile("(?:^|[\\s\\[(`])(-{1,2}[a-z][a-z-]*)")

// readmeFlags reads the flags the "Command line" section of README.md names
// in backquotes.
func readmeFlags(readme string) (map[string]bool, error) {
	_, section, ok := strings.Cut(readme, "\n## Command line\n")
	if !ok {
		return nil, fmt.Errorf(`README.md has no "## Command line" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	flags := map[string]bool{}
	for _, span := range regexp.MustCompile("`[^`\n]+`").FindAllString(section, -1) {
		for _, m := range readmeFlagWord.FindAllStringSubmatch(span, -1) {
			flags[strings.TrimLeft(m[1], "-")] = true
		}
	}
	return flags, nil
}

// flagDrift compares the three lists both ways and names each flag one of
// them lacks.
func flagDrift(defined, help, readme map[string]bool) []string {
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
	missing(defined, readme, `README.md's "Command line" does not name a flag tai parses`)
	missing(readme, defined, `README.md's "Command line" names a flag tai does not parse`)
	return problems
}

func readReadme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestHelpAndReadmeNameEveryFlag: --help lists every flag the parser
// defines, one line each, and README.md's Command line section names the
// same flags, no more and no fewer.
func TestHelpAndReadmeNameEveryFlag(t *testing.T) {
	defined := definedFlags()
	if len(defined) < 10 {
		t.Fatalf("the flag set defines only %v", defined)
	}
	help, problems := helpFlags(usage)
	readme, err := readmeFlags(readReadme(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(problems, flagDrift(defined, help, readme)...) {
		t.Error(p)
	}
}

// TestFlagDriftIsFound: a flag added to the parser, dropped from --help or
// from README.md, or documented but gone, is reported by name; so is a
// flag's second line in --help.
func TestFlagDriftIsFound(t *testing.T) {
	defined := definedFlags()
	help, _ := helpFlags(usage)
	readme, err := readmeFlags(readReadme(t))
	if err != nil {
		t.Fatal(err)
	}
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
		name                  string
		defined, help, readme map[string]bool
		want                  string
	}{
		{"a new flag", with(defined, "sandbox"), help, readme, "--help does not list a flag tai parses: -sandbox"},
		{"a new flag, README", with(defined, "sandbox"), with(help, "sandbox"), readme, `README.md's "Command line" does not name a flag tai parses: -sandbox`},
		{"a flag gone", without(defined, "clean"), help, readme, "--help lists a flag tai does not parse: -clean"},
		{"a flag gone, README", without(defined, "clean"), without(help, "clean"), readme, `README.md's "Command line" names a flag tai does not parse: -clean`},
		{"help drops one", defined, without(help, "vault"), readme, "--help does not list a flag tai parses: -vault"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(flagDrift(tc.defined, tc.help, tc.readme), "\n")
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
	if readme, err := readmeFlags(strings.Replace(readReadme(t), "`--clean`", "clean", -1)); err != nil || readme["clean"] {
		t.Errorf("README.md's --clean taken out is still read: %v", err)
	}
}
