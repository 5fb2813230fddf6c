package main

import (
	"fmt"
	"io"
	"strings"

	"tai/lua"
	"tai/stdlib"
)

// help answers --help: the usage alone, then the list of topics; with
// words after it, the topic they name (tai --help servers) or the lines
// of every topic holding a word (tai --help search WORD). Topics in the
// help/ folder of the config folder replace or add to the built-in ones,
// except under --clean.
func help(o *options, stdout, stderr io.Writer) int {
	dir := ""
	if !o.clean {
		dir = lua.HelpDir(lua.DefaultConfigDir())
	}
	topics, err := stdlib.Topics(dir)
	if err != nil {
		fmt.Fprintf(stderr, "tai: %v\n", err)
		return lua.ExitError
	}
	switch {
	case len(o.args) == 0:
		io.WriteString(stdout, usage)
		fmt.Fprintln(stdout, "\nTopics of the manual (tai --help TOPIC reads one, tai --help search WORD):")
		for _, l := range topicLines(topics) {
			fmt.Fprintln(stdout, l)
		}
		return lua.ExitOK
	case o.args[0] == "search":
		word := strings.Join(o.args[1:], " ")
		if strings.TrimSpace(word) == "" {
			return usageError(stderr, "--help search needs a word: tai --help search vault")
		}
		matches := stdlib.Search(topics, word)
		if len(matches) == 0 {
			fmt.Fprintf(stderr, "tai: no help topic says %q; tai --help lists the topics\n", word)
			return lua.ExitError
		}
		for _, m := range matches {
			fmt.Fprintf(stdout, "%s:%d: %s\n", m.Topic, m.Line, m.Text)
		}
		return lua.ExitOK
	case len(o.args) > 1:
		return usageError(stderr, fmt.Sprintf("--help takes one topic, but %q follows it", o.args[1]))
	}
	name := strings.TrimPrefix(o.args[0], "/")
	for _, t := range topics {
		if t.Name == name {
			io.WriteString(stdout, t.Text)
			return lua.ExitOK
		}
	}
	names := make([]string, len(topics))
	for i, t := range topics {
		names[i] = t.Name
	}
	return usageError(stderr, fmt.Sprintf("no help topic %q; the topics are %s", o.args[0], strings.Join(names, ", ")))
}

// topicLines is the list of topics: one line each, the name then the
// summary.
func topicLines(topics []stdlib.Topic) []string {
	width := 0
	for _, t := range topics {
		width = max(width, len(t.Name))
	}
	out := make([]string, len(topics))
	for i, t := range topics {
		out[i] = fmt.Sprintf("  %-*s  %s", width, t.Name, t.Summary)
	}
	return out
}
