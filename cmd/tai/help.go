package main

import (
	"context"
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
		lines, err := topicLines(o)
		if err != nil {
			fmt.Fprintf(stderr, "tai: %v\n", err)
			return lua.ExitError
		}
		io.WriteString(stdout, usage)
		fmt.Fprintln(stdout, "\nTopics of the manual (tai --help TOPIC reads one, tai --help search WORD):")
		fmt.Fprintln(stdout, lines)
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

// topicLines is the list of topics, one line each, the name then the
// summary, as /help lays it out (repl.topic_lines), never cut.
func topicLines(o *options) (string, error) {
	h, err := lua.New(&lua.Options{Version: version, Clean: o.clean, Stdout: io.Discard, Stderr: io.Discard})
	if err != nil {
		return "", err
	}
	defer h.Close()
	got, err := h.DoString(context.Background(), `return table.concat(require("tai.repl").topic_lines(assert(tai.help.topics()), 1e6), "\n")`, "help")
	if err != nil {
		return "", err
	}
	return got[0].(string), nil
}
