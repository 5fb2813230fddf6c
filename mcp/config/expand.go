package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"tai/mcp"
)

// Folder variables: the IDE and Claude Code names for the project folder,
// which FolderVars answers with the folder tai runs in.
var folderNames = []string{"workspaceFolder", "workspaceRoot", "CLAUDE_PROJECT_DIR", "CLAUDE_PLUGIN_ROOT"}

// maxExpandDepth bounds defaults that hold references of their own.
const maxExpandDepth = 4

// Ref is one ${…} reference found in a string.
type Ref struct {
	// Name is what the lookup is asked for: NAME for ${NAME}, ${env:NAME}
	// and ${input:NAME}.
	Name string
	// Kind is "", "env" or "input".
	Kind string
	// Default is the text after :- (or -), and HasDefault says whether
	// there was one.
	Default    string
	HasDefault bool
	// Text is the reference as written, ${…} included.
	Text string
}

// Expand resolves ${VAR}, ${VAR:-default}, ${env:NAME} and ${input:id} in
// command, args, env, url and headers. lookup is asked in order (process
// env first, then vault secrets — the caller composes it, see Chain); in
// command, args, url and headers a name the entry's env defines is that
// env value. A name nothing answers keeps its literal ${…} and is
// returned in missing, each once, in order of appearance. Expand does not
// change e.
func Expand(e mcp.Entry, lookup func(name string) (string, bool)) (mcp.Entry, []string) {
	var missing []string
	seen := map[string]bool{}
	miss := func(name string) {
		if !seen[name] {
			seen[name] = true
			missing = append(missing, name)
		}
	}
	x := func(s string) string { return expandString(s, lookup, miss, 0) }
	out := e
	out.Env = expandMap(e.Env, x)
	if len(out.Env) > 0 {
		// A name the entry's own env defines means that value in the
		// command line, URL and headers, as the server (mcp-remote's
		// --header "Authorization: Bearer ${KEY}") would read it.
		own := func(name string) (string, bool) {
			v, ok := out.Env[name]
			if ok && strings.Contains(e.Env[name], "${"+name) {
				return "", false // env NAME = "${NAME}": from outside
			}
			return v, ok
		}
		outer := lookup
		x = func(s string) string { return expandString(s, Chain(own, outer), miss, 0) }
	}
	out.Command = x(e.Command)
	if e.Args != nil {
		out.Args = make([]string, len(e.Args))
		for i, a := range e.Args {
			out.Args[i] = x(a)
		}
	}
	out.URL = x(e.URL)
	out.Headers = expandMap(e.Headers, x)
	out.Allow = slices.Clone(e.Allow)
	out.Deny = slices.Clone(e.Deny)
	return out, missing
}

func expandMap(m map[string]string, x func(string) string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out[k] = x(m[k])
	}
	return out
}

// expandString replaces each reference in s: by lookup's answer, else its
// default (expanded in turn), else it stays as written and miss is told.
func expandString(s string, lookup func(string) (string, bool), miss func(string), depth int) string {
	if !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		ref, n, ok := parseRef(s[i:])
		if !ok {
			b.WriteString(s[i : i+2])
			s = s[i+2:]
			continue
		}
		s = s[i+n:]
		if lookup != nil {
			if v, found := lookup(ref.Name); found && (v != "" || !ref.HasDefault) {
				b.WriteString(v)
				continue
			}
		}
		if ref.HasDefault && depth < maxExpandDepth {
			b.WriteString(expandString(ref.Default, lookup, miss, depth+1))
			continue
		}
		miss(ref.Name)
		b.WriteString(ref.Text)
	}
}

// parseRef reads the reference at the start of s ("${…}"), returning it and
// its length; ok is false when s does not start a well-formed one.
func parseRef(s string) (Ref, int, bool) {
	if !strings.HasPrefix(s, "${") {
		return Ref{}, 0, false
	}
	depth := 0
	end := -1
	for i := 2; i < len(s); i++ {
		if strings.HasPrefix(s[i:], "${") {
			depth++
			i++
			continue
		}
		if s[i] == '}' {
			if depth == 0 {
				end = i
				break
			}
			depth--
		}
	}
	if end < 0 {
		return Ref{}, 0, false
	}
	body := s[2:end]
	ref := Ref{Text: s[:end+1]}
	if k, rest, ok := strings.Cut(body, ":"); ok && (k == "env" || k == "input") {
		ref.Kind = k
		body = rest
	}
	name := body
	for j := 0; j < len(body); j++ {
		c := body[j]
		if c == ':' && j+1 < len(body) && body[j+1] == '-' {
			name, ref.Default, ref.HasDefault = body[:j], body[j+2:], true
			break
		}
		if c == '-' && ref.Kind == "" && j > 0 {
			name, ref.Default, ref.HasDefault = body[:j], body[j+1:], true
			break
		}
	}
	if !validRefName(name, ref.Kind) {
		return Ref{}, 0, false
	}
	ref.Name = name
	return ref, end + 1, true
}

// validRefName: environment names are letters, digits and _, not starting
// with a digit; VS Code input ids may also hold - and .
func validRefName(name, kind string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		case kind == "input" && (c == '-' || c == '.' || c >= '0' && c <= '9'):
		default:
			return false
		}
	}
	return true
}

// Refs returns the well-formed references in s, in order.
func Refs(s string) []Ref {
	var out []Ref
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			return out
		}
		ref, n, ok := parseRef(s[i:])
		if !ok {
			s = s[i+2:]
			continue
		}
		out = append(out, ref)
		s = s[i+n:]
	}
}

// malformedRef reports whether s holds a ${ that starts no well-formed
// reference (one nested in a well-formed reference's default is its
// business).
func malformedRef(s string) bool {
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			return false
		}
		_, n, ok := parseRef(s[i:])
		if !ok {
			return true
		}
		s = s[i+n:]
	}
}

// Chain returns a lookup that asks each of lookups in turn and takes the
// first answer.
func Chain(lookups ...func(name string) (string, bool)) func(name string) (string, bool) {
	return func(name string) (string, bool) {
		for _, l := range lookups {
			if l == nil {
				continue
			}
			if v, ok := l(name); ok {
				return v, true
			}
		}
		return "", false
	}
}

// FolderVars returns a lookup answering the project-folder variables of
// VS Code (${workspaceFolder}, ${workspaceRoot}) and Claude Code
// (${CLAUDE_PROJECT_DIR}, ${CLAUDE_PLUGIN_ROOT}) with dir, the folder tai
// runs in; an empty dir answers nothing, so they stay missing.
func FolderVars(dir string) func(name string) (string, bool) {
	return func(name string) (string, bool) {
		if dir == "" || !slices.Contains(folderNames, name) {
			return "", false
		}
		return dir, true
	}
}

// IsFolderVar says whether name is one FolderVars answers.
func IsFolderVar(name string) bool { return slices.Contains(folderNames, name) }

// MissingError is the error that refuses to spawn or connect entry while
// the variables in missing are unresolved: it names each and says how to
// set it.
func MissingError(entry string, missing []string) error {
	if len(missing) == 0 {
		return nil
	}
	var b strings.Builder
	if len(missing) == 1 {
		fmt.Fprintf(&b, "mcp server %q needs ${%s}, which is not set", entry, missing[0])
	} else {
		fmt.Fprintf(&b, "mcp server %q needs ", entry)
		for i, m := range missing {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "${%s}", m)
		}
		b.WriteString(", which are not set")
	}
	fmt.Fprintf(&b, ": export %s=… before starting tai, or store it in the vault with tai.vault.secret_set(%q, \"…\")", missing[0], missing[0])
	if IsFolderVar(missing[0]) {
		b.WriteString(" (it names the project folder; tai uses the folder it runs in when it knows it)")
	}
	return &MissingVarsError{Entry: entry, Names: slices.Clone(missing), msg: b.String()}
}

// MissingVarsError is what MissingError returns.
type MissingVarsError struct {
	// Entry names the server that cannot start.
	Entry string
	// Names are the unresolved variables, in order of appearance.
	Names []string
	msg   string
}

// Error names the variables and how to set them.
func (e *MissingVarsError) Error() string { return e.msg }
