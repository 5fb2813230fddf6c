package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
)

// Clients names the MCP clients whose config files Import reads.
var Clients = []string{"claude-desktop", "claude-code", "cursor", "vscode", "codex", "gemini"}

// Places says where things are for ConfigPaths: the home folder, the
// project folder, the OS and the environment. Zero fields mean this
// process's.
type Places struct {
	Home   string
	Dir    string // the project folder (workspace files)
	GOOS   string
	Getenv func(string) string
}

func (p Places) fill() Places {
	if p.Getenv == nil {
		p.Getenv = os.Getenv
	}
	if p.Home == "" {
		p.Home, _ = os.UserHomeDir()
	}
	if p.Dir == "" {
		p.Dir, _ = os.Getwd()
	}
	if p.GOOS == "" {
		p.GOOS = runtime.GOOS
	}
	return p
}

// configDir is the OS's per-user config folder, as each desktop client
// uses it: %APPDATA% on Windows, ~/Library/Application Support on macOS,
// $XDG_CONFIG_HOME (else ~/.config) elsewhere.
func (p Places) configDir() string {
	switch p.GOOS {
	case "windows":
		if d := p.Getenv("APPDATA"); d != "" {
			return d
		}
		return filepath.Join(p.Home, "AppData", "Roaming")
	case "darwin":
		return filepath.Join(p.Home, "Library", "Application Support")
	}
	if d := p.Getenv("XDG_CONFIG_HOME"); d != "" && filepath.IsAbs(d) {
		return d
	}
	return filepath.Join(p.Home, ".config")
}

// ConfigPaths returns the files client keeps its MCP servers in, at the
// places its documentation gives, user-wide files first, then the
// project's. In the home folder the two may be one file (Gemini CLI's
// ~/.gemini/settings.json): it is listed, and so read, once.
func ConfigPaths(client string, p Places) ([]string, error) {
	paths, err := configPaths(client, p.fill())
	return slices.Compact(paths), err
}

func configPaths(client string, p Places) ([]string, error) {
	switch client {
	case "claude-desktop":
		return []string{filepath.Join(p.configDir(), "Claude", "claude_desktop_config.json")}, nil
	case "claude-code":
		return []string{filepath.Join(p.Home, ".claude.json"), filepath.Join(p.Dir, ".mcp.json")}, nil
	case "cursor":
		return []string{filepath.Join(p.Home, ".cursor", "mcp.json"), filepath.Join(p.Dir, ".cursor", "mcp.json")}, nil
	case "vscode":
		user := filepath.Join(p.configDir(), "Code", "User", "mcp.json")
		return []string{user, filepath.Join(p.Dir, ".vscode", "mcp.json")}, nil
	case "codex":
		home := p.Getenv("CODEX_HOME")
		if home == "" {
			home = filepath.Join(p.Home, ".codex")
		}
		return []string{filepath.Join(home, "config.toml")}, nil
	case "gemini":
		return []string{filepath.Join(p.Home, ".gemini", "settings.json"), filepath.Join(p.Dir, ".gemini", "settings.json")}, nil
	}
	return nil, fmt.Errorf("unknown client %q: use one of %s, or give a file path", client, strings.Join(Clients, ", "))
}

// ImportReport is what Import did with each file it read.
type ImportReport struct {
	Files []ImportedFile `json:"files"`
}

// ImportedFile is one config file and what became of its servers.
type ImportedFile struct {
	Path   string    `json:"path"`
	Report AddReport `json:"report"`
	Error  string    `json:"error,omitempty"` // the file could not be read or normalized
}

// Import reads the config files of client (one of Clients) at their
// documented places, or the file path when client is empty, and registers
// every server in them through Add: normalized, consented to, verified,
// stored disabled unless the file enables it. A server already registered
// is skipped. Files that do not exist are left out; none at all is an
// error naming the places looked at.
func (b *Bridge) Import(ctx context.Context, client, path string, p Places) (ImportReport, error) {
	rep := ImportReport{Files: []ImportedFile{}}
	var paths []string
	switch {
	case path != "":
		paths = []string{path}
	case client != "":
		var err error
		if paths, err = ConfigPaths(client, p); err != nil {
			return rep, err
		}
	default:
		return rep, fmt.Errorf("import: name a client (%s) or give a file path", strings.Join(Clients, ", "))
	}
	p = p.fill()
	found := false
	for _, f := range paths {
		data, err := readSource(f)
		if errors.Is(err, os.ErrNotExist) && path == "" {
			continue
		}
		found = true
		file := ImportedFile{Path: f, Report: AddReport{Servers: []ServerOutcome{}}}
		if err != nil {
			file.Error = err.Error()
			rep.Files = append(rep.Files, file)
			continue
		}
		text := string(data)
		if client == "claude-code" && filepath.Base(f) == ".claude.json" {
			if text, err = claudeCodeServers(data, p.Dir); err != nil {
				file.Error = err.Error()
				rep.Files = append(rep.Files, file)
				continue
			}
			if text == "" {
				continue // no servers kept there
			}
		}
		r, err := b.Add(ctx, AddRequest{Source: text})
		file.Report = r
		if err != nil {
			file.Error = err.Error()
		}
		rep.Files = append(rep.Files, file)
	}
	if !found {
		return rep, fmt.Errorf("import: no %s config found; looked at %s", client, strings.Join(paths, ", "))
	}
	return rep, nil
}

// claudeCodeServers picks the servers out of Claude Code's ~/.claude.json:
// the user's (top-level mcpServers) and the project's (projects[dir]), as
// one {"mcpServers": …} document; "" when there are none.
func claudeCodeServers(data []byte, dir string) (string, error) {
	var doc struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
		Projects   map[string]struct {
			MCPServers map[string]json.RawMessage `json:"mcpServers"`
		} `json:"projects"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return "", fmt.Errorf("not valid JSON: %v", err)
	}
	servers := map[string]json.RawMessage{}
	for k, v := range doc.MCPServers {
		servers[k] = v
	}
	if p, ok := doc.Projects[dir]; ok {
		for k, v := range p.MCPServers {
			servers[k] = v
		}
	}
	if len(servers) == 0 {
		return "", nil
	}
	names := make([]string, 0, len(servers))
	for k := range servers {
		names = append(names, k)
	}
	sort.Strings(names)
	var sb strings.Builder
	sb.WriteString(`{"mcpServers":{`)
	for i, k := range names {
		if i > 0 {
			sb.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		sb.Write(kb)
		sb.WriteByte(':')
		sb.Write(servers[k])
	}
	sb.WriteString("}}")
	return sb.String(), nil
}
