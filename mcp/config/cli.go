package config

import (
	"fmt"
	"regexp"
	"strings"
)

// FormatCLI is a pasted "claude|codex|gemini mcp add …" command line,
// parsed as {NAME: {canonical fields}}.
const FormatCLI = "cli"

var cliStart = regexp.MustCompile(`^(claude|codex|gemini)[ \t]+mcp[ \t]+add([ \t]|$)`)

// IsCLILine reports whether text is a "claude mcp add", "codex mcp add"
// or "gemini mcp add" command line (not a file name, though it holds a
// URL's slashes).
func IsCLILine(text string) bool {
	_, _, ok := cliLine(text)
	return ok
}

// cliLine returns the pasted text as one command line when it is a
// "claude mcp add", "codex mcp add" or "gemini mcp add" command (a leading
// "$ " prompt dropped, backslash-newline continuations joined), and the
// CLI's name.
func cliLine(t string) (string, string, bool) {
	t = strings.ReplaceAll(t, "\r\n", "\n")
	t = strings.TrimPrefix(t, "$ ")
	t = strings.TrimSpace(t)
	m := cliStart.FindStringSubmatch(t)
	if m == nil {
		return "", "", false
	}
	t = strings.ReplaceAll(t, "\\\n", " ")
	return t, m[1], true
}

// cliFlag is one flag of a CLI's "mcp add": the canonical field it fills
// ("transport", "env", "header", "url", "bearer", "scope", "client_id",
// "callback_port", "client_secret"); a bare flag takes no value.
type cliFlag struct {
	field string
	bare  bool
}

// cliFlags are the documented flags of each CLI's "mcp add".
var cliFlags = map[string]map[string]cliFlag{
	"claude": {
		"-t": {field: "transport"}, "--transport": {field: "transport"},
		"-e": {field: "env"}, "--env": {field: "env"},
		"-H": {field: "header"}, "--header": {field: "header"},
		"-s": {field: "scope"}, "--scope": {field: "scope"},
		"--client-id": {field: "client_id"}, "--callback-port": {field: "callback_port"},
		"--client-secret": {field: "client_secret", bare: true},
	},
	"gemini": {
		"-t": {field: "transport"}, "--transport": {field: "transport"},
		"-e": {field: "env"}, "--env": {field: "env"},
		"-H": {field: "header"}, "--header": {field: "header"},
		"-s": {field: "scope"}, "--scope": {field: "scope"},
	},
	"codex": {
		"--env":                  {field: "env"},
		"--url":                  {field: "url"},
		"--bearer-token-env-var": {field: "bearer"},
	},
}

var (
	envWord    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)
	headerWord = regexp.MustCompile(`^[A-Za-z0-9_-]+:([^/]|$)`) // not a URL
)

// parseCLI reads the words of a "CLI mcp add …" line into a document
// holding one canonical entry, or returns a note refusing it.
func parseCLI(cli string, words []string, hints Hints) (*Document, []Note, *Note) {
	var notes []Note
	flags := cliFlags[cli]
	entry := NewObject()
	env, headers, oauth := NewObject(), NewObject(), NewObject()
	transport := ""
	var pos, tail []string
	refuse := func(format string, args ...any) *Note {
		name := ""
		if len(pos) > 0 {
			name = pos[0]
		}
		return &Note{Server: name, Level: LevelRefused, Text: fmt.Sprintf(format, args...)}
	}
	rest := words[3:]
	for i := 0; i < len(rest); i++ {
		w := rest[i]
		if w == "--" {
			tail = rest[i+1:]
			break
		}
		if !strings.HasPrefix(w, "-") || w == "-" {
			pos = append(pos, w)
			continue
		}
		name, value, inline := strings.Cut(w, "=")
		f, ok := flags[name]
		if !ok {
			return nil, nil, refuse("%s mcp add: tai does not know the flag %s; put the server's own command and arguments after --, or write the entry as JSON", cli, name)
		}
		var values []string
		if f.bare {
			// claude asks for the client secret; tai reads it from the vault
			text := fmt.Sprintf("%s: tai reads the client secret from the vault: store it with tai.vault.secret_set(\"NAME\", \"…\")", name)
			if hints.ClientSecret != nil {
				text += " and " + hints.ClientSecret()
			}
			notes = append(notes, Note{Level: LevelInfo, Text: text})
			continue
		}
		if inline {
			values = []string{value}
		} else {
			if i+1 >= len(rest) || rest[i+1] == "--" {
				return nil, nil, refuse("%s mcp add: the flag %s needs a value", cli, name)
			}
			i++
			values = []string{rest[i]}
			// claude's -e and -H take several values in a row.
			for cli == "claude" && i+1 < len(rest) && (f.field == "env" && envWord.MatchString(rest[i+1]) || f.field == "header" && headerWord.MatchString(rest[i+1])) {
				i++
				values = append(values, rest[i])
			}
		}
		for _, v := range values {
			switch f.field {
			case "transport":
				transport = v
			case "scope":
				notes = append(notes, Note{Level: LevelInfo, Text: fmt.Sprintf("ignored %s %s: tai keeps servers in its vault and enables them per profile", name, v)})
			case "env":
				k, val, ok := strings.Cut(v, "=")
				if !ok || !envWord.MatchString(v) {
					return nil, nil, refuse("%s mcp add: the value after %s is not KEY=VALUE (it is not shown: it may be a secret)", cli, name)
				}
				env.Set(k, val)
			case "header":
				k, val, ok := strings.Cut(v, ":")
				if !ok || strings.TrimSpace(k) == "" {
					return nil, nil, refuse("%s mcp add: the value after %s is not \"Name: value\" (it is not shown: it may be a secret)", cli, name)
				}
				headers.Set(strings.TrimSpace(k), strings.TrimSpace(val))
			case "url":
				entry.Set("url", v)
				transport = "http"
			case "bearer":
				headers.Set("Authorization", "Bearer ${"+v+"}")
			case "client_id":
				oauth.Set("client_id", v)
			case "callback_port":
				oauth.Set("callback_port", v)
			}
		}
	}
	if len(pos) == 0 {
		return nil, nil, refuse("%s mcp add: the line names no server (expected %s mcp add NAME …)", cli, cli)
	}
	name := pos[0]
	cmd := append(pos[1:len(pos):len(pos)], tail...)
	if transport == "" {
		transport = "stdio"
		if _, ok := entry.Values["url"]; ok {
			transport = "http"
		}
	}
	entry.Set("transport", transport)
	if transport == "stdio" {
		if len(cmd) == 0 {
			return nil, nil, refuse("%s mcp add: no command to run after the name %s", cli, name)
		}
		entry.Set("command", cmd[0])
		args := make([]any, 0, len(cmd)-1)
		for _, a := range cmd[1:] {
			args = append(args, a)
		}
		entry.Set("args", args)
	} else if _, ok := entry.Values["url"]; !ok {
		if len(cmd) != 1 {
			return nil, nil, refuse("%s mcp add: a %s server takes one URL after its name, got %d words", cli, transport, len(cmd))
		}
		entry.Set("url", cmd[0])
	} else if len(cmd) > 0 {
		return nil, nil, refuse("%s mcp add: --url is given, so %q is not expected", cli, strings.Join(cmd, " "))
	}
	if len(env.Keys) > 0 {
		entry.Set("env", env)
	}
	if len(headers.Keys) > 0 {
		entry.Set("headers", headers)
	}
	if len(oauth.Keys) > 0 {
		entry.Set("oauth", oauth)
	}
	doc := NewObject()
	doc.Set(name, entry)
	notes = append([]Note{{Level: LevelInfo, Text: fmt.Sprintf("read as a %s mcp add command line", cli)}}, notes...)
	return &Document{Value: doc, Format: FormatCLI}, notes, nil
}
