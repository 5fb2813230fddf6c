package server

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// KeyEnv is the environment variable the client snippets read the key
// from, so that none of them holds the key itself.
const KeyEnv = "TAI_MCP_KEY"

// keyInput is the id of the VS Code input that asks for the key.
const keyInput = "tai-mcp-key"

// Snippet is a ready-to-paste configuration of one MCP client for this
// server.
type Snippet struct {
	// Client names the MCP client ("Claude Code").
	Client string
	// Where says where the text goes.
	Where string
	// Text is what to paste.
	Text string
}

// Snippets returns the configurations of Claude Code, Gemini CLI, Cursor,
// VS Code, Codex and another tai for a server at url named name. The key
// is never in them: Claude Code, Gemini CLI, Cursor, Codex and tai read
// it from $TAI_MCP_KEY (KeyEnv) each time they connect (tai also from the
// vault secret of that name), VS Code asks for it once as a password
// input. The command lines quote ${TAI_MCP_KEY} so that the
// shell passes it on as written: expanded there, the key would be on the
// client's command line, where every user of the machine can read it, and
// in its config file.
//
// taiAdd is the command another tai's REPL adds a pasted entry with,
// which its snippet starts with: the server names no REPL command itself.
func Snippets(name, url, taiAdd string) []Snippet {
	header := "Bearer ${" + KeyEnv + "}"
	addLine := func(cli, flags string) string {
		return fmt.Sprintf(`%s mcp add %s--transport http %s %s --header 'Authorization: %s'`, cli, flags, name, url, header)
	}
	jsonText := func(v any) string {
		b, _ := json.MarshalIndent(v, "", "  ")
		return string(b)
	}
	type entry struct {
		Type    string            `json:"type,omitempty"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
	}
	return []Snippet{
		{
			Client: "Claude Code",
			Where:  "run once; claude reads $" + KeyEnv + " when it connects",
			Text:   addLine("claude", ""),
		},
		{
			Client: "Gemini CLI",
			Where:  "run once; gemini reads $" + KeyEnv + " when it connects",
			Text:   addLine("gemini", "--scope user "),
		},
		{
			Client: "Cursor",
			Where:  "~/.cursor/mcp.json (or .cursor/mcp.json in a project)",
			Text: jsonText(map[string]any{"mcpServers": map[string]any{
				name: entry{URL: url, Headers: map[string]string{"Authorization": "Bearer ${env:" + KeyEnv + "}"}},
			}}),
		},
		{
			Client: "VS Code",
			Where:  ".vscode/mcp.json (it asks for the key once)",
			Text: jsonText(struct {
				Inputs  []map[string]any `json:"inputs"`
				Servers map[string]entry `json:"servers"`
			}{
				Inputs: []map[string]any{{"type": "promptString", "id": keyInput, "description": "tai MCP server key", "password": true}},
				Servers: map[string]entry{
					name: {Type: "http", URL: url, Headers: map[string]string{"Authorization": "Bearer ${input:" + keyInput + "}"}},
				},
			}),
		},
		{
			Client: "Codex",
			Where:  "~/.codex/config.toml",
			Text: fmt.Sprintf("[mcp_servers.%s]\nurl = %s\nbearer_token_env_var = %s",
				name, strconv.Quote(url), strconv.Quote(KeyEnv)),
		},
		{
			Client: "Another tai",
			Where:  "at its prompt; it reads $" + KeyEnv + ", else the vault secret of that name, when it connects",
			Text: taiAdd + " " + oneLineJSON(map[string]any{
				name: entry{URL: url, Headers: map[string]string{"Authorization": header}},
			}),
		},
	}
}

// oneLineJSON is v as JSON on one line, < > & as they are.
func oneLineJSON(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSpace(b.String())
}

// Banner is what a server says when it starts: where it listens, that it
// runs every tool call without asking (the equivalent of --yolo), the key
// masked, and the snippets of Snippets for url; then, on its last lines,
// where it listens and that it asks nothing again, since the snippets
// push the top off a terminal. exposed says the bind address is reachable
// from other machines; taiAdd is as for Snippets.
func Banner(name, url, key string, exposed bool, taiAdd string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "tai: serving MCP on %s\n", url)
	b.WriteString("\n" +
		"  !! WARNING: serving runs the equivalent of --yolo. Every tool call a client makes runs\n" +
		"  !! without asking: shell commands, file writes, secrets, the network. The key is the only\n" +
		"  !! authorization: give it only to clients you trust. Questions (ask_user) and profile\n" +
		"  !! changes a model asks for are refused, since nobody is here to answer.\n")
	if exposed {
		b.WriteString("  !! The server listens beyond this machine, over plain HTTP: anyone on the network who\n" +
			"  !! learns the key controls this account. Prefer --mcp-bind 127.0.0.1 and an SSH tunnel.\n")
	}
	fmt.Fprintf(&b, "\nkey: %s. The snippets read it from $%s: export %s=<the key> first.\n", MaskKey(key), KeyEnv, KeyEnv)
	for _, s := range Snippets(name, url, taiAdd) {
		fmt.Fprintf(&b, "\n%s — %s:\n", s.Client, s.Where)
		for _, line := range strings.Split(s.Text, "\n") {
			b.WriteString("  " + line + "\n")
		}
	}
	// The snippets fill a screen: what matters most is said again last,
	// where a terminal still shows it, in other words than the first line,
	// which scripts read the URL from.
	fmt.Fprintf(&b, "\ntai: the MCP server is at %s and runs every tool call without asking (see the warning above)\n", url)
	if exposed {
		b.WriteString("  !! reachable beyond this machine, over plain HTTP\n")
	}
	b.WriteString("Stop with Ctrl-C (or SIGTERM).\n")
	return b.String()
}
