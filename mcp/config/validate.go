package config

import (
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"tai/mcp"
	"tai/mcp/screen"
)

// NameRule says what a server name may be, for messages.
const NameRule = "1 to 64 lowercase letters, digits, '-' and '_', starting with a letter or digit"

var validName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// ValidName reports whether name follows NameRule.
func ValidName(name string) bool { return validName.MatchString(name) }

// canonicalKeys are the fields of a raw entry that validate reads.
var canonicalKeys = []string{"name", "transport", "command", "args", "env", "cwd", "url", "headers", "oauth", "allow", "deny", "enabled", "sandbox"}

// validate turns raw entries into mcp.Entry values, refusing (as a note)
// those that cannot be used and noting what needs a look; g checks the
// folders a sandbox grants.
func validate(raws []map[string]any, source string, g *grantRules) ([]mcp.Entry, []Note) {
	var entries []mcp.Entry
	var notes []Note
	taken := map[string]bool{}
	for i, raw := range raws {
		v := &checker{}
		e := v.entry(raw, source, i, g)
		if v.refusal == "" {
			switch {
			case taken[e.Name]:
				v.refuse(fmt.Sprintf("another entry in this paste is already named %q: rename one of them", e.Name))
			case e.Transport == "sse" || e.Transport == "ws" || e.Transport == "websocket":
				hint := ""
				if strings.HasSuffix(strings.TrimRight(e.URL, "/"), "/sse") {
					hint = "; many servers offer Streamable HTTP at the same address ending in /mcp instead of /sse: paste that URL if yours does"
				}
				v.refuse(fmt.Sprintf("transport %q is not supported: tai speaks stdio and Streamable HTTP (\"http\") only, not the legacy HTTP+SSE or WebSocket transports%s", e.Transport, hint))
			case refersTo(e, "TAI_VAULT_PASSPHRASE"):
				v.refuse("the entry refers to ${TAI_VAULT_PASSPHRASE}, the vault's passphrase, which no server is given")
			default:
				if err := validEntry(e); err != nil {
					v.refuse(strings.TrimPrefix(err.Error(), fmt.Sprintf("mcp entry %q: ", e.Label())))
				}
			}
		}
		name := e.Name
		if name == "" {
			name = fmt.Sprintf("entry %d", i+1)
		}
		for _, n := range v.notes {
			n.Server = name
			notes = append(notes, n)
		}
		if v.refusal != "" {
			notes = append(notes, Note{Server: name, Level: LevelRefused, Text: v.refusal})
			if e.Name != "" {
				// the name stays taken, so no note is about two entries
				taken[e.Name] = true
			}
			continue
		}
		taken[e.Name] = true
		for _, n := range check(e) {
			n.Server = name
			notes = append(notes, n)
		}
		entries = append(entries, e)
	}
	return entries, notes
}

// checker collects the notes on one entry and the first reason to refuse
// it.
type checker struct {
	notes   []Note
	refusal string
}

func (c *checker) note(level, format string, args ...any) {
	c.notes = append(c.notes, Note{Level: level, Text: fmt.Sprintf(format, args...)})
}

func (c *checker) refuse(why string) {
	if c.refusal == "" {
		c.refusal = why
	}
}

func (c *checker) entry(raw map[string]any, source string, i int, g *grantRules) mcp.Entry {
	e := mcp.Entry{Source: source}
	e.Name = c.str(raw, "name")
	switch {
	case e.Name == "":
		c.refuse(fmt.Sprintf("entry %d has no name: give it one (%s)", i+1, NameRule))
	case !ValidName(e.Name):
		c.refuse(fmt.Sprintf("name %q does not follow the rule for names: %s", e.Name, NameRule))
	}
	e.Transport = strings.ToLower(c.str(raw, "transport"))
	e.Command = c.str(raw, "command")
	e.Args = c.list(raw, "args")
	e.Env = c.dict(raw, "env")
	e.Cwd = c.str(raw, "cwd")
	e.URL = c.str(raw, "url")
	e.Headers = c.dict(raw, "headers")
	e.OAuth = c.oauth(raw, e.Name)
	e.Allow = c.list(raw, "allow")
	e.Deny = c.list(raw, "deny")
	e.Sandbox = c.sandbox(raw, g)
	if !e.Sandbox.Empty() && e.Transport == mcp.TransportHTTP {
		c.note(LevelWarn, "sandbox is for stdio servers, which tai starts; an http server runs elsewhere, so it is ignored")
		e.Sandbox = nil
	}
	if v, ok := raw["enabled"]; ok && v != nil {
		if b, ok := v.(bool); ok {
			e.Enabled = b
		} else {
			c.note(LevelWarn, "enabled is a %s, not true or false; the entry is not enabled", kindOf(v))
		}
	}
	var unknown []string
	for k := range raw {
		if !slices.Contains(canonicalKeys, k) {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	for _, k := range unknown {
		c.note(LevelWarn, "field %q is not one tai knows; it is ignored", k)
	}
	return e
}

// scalar turns a string, number or boolean into its text.
func scalar(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case int64:
		return fmt.Sprint(x), true
	case float64:
		return fmt.Sprint(x), true
	case int:
		return fmt.Sprint(x), true
	case bool:
		return fmt.Sprint(x), true
	}
	return "", false
}

func (c *checker) str(raw map[string]any, key string) string {
	v, ok := raw[key]
	if !ok || v == nil {
		return ""
	}
	s, ok := scalar(v)
	if !ok {
		c.refuse(fmt.Sprintf("%s is a %s; it must be a string", key, kindOf(v)))
	}
	return s
}

func (c *checker) list(raw map[string]any, key string) []string {
	return c.listOf(raw[key], key)
}

// listOf reads v, the value of the field key, as a list of strings (nil
// for none).
func (c *checker) listOf(v any, key string) []string {
	if v == nil {
		return nil
	}
	var items []any
	switch x := v.(type) {
	case []any:
		items = x
	case *Object:
		if len(x.Keys) > 0 {
			c.refuse(fmt.Sprintf("%s is an object; it must be a list of strings", key))
		}
		return nil
	case map[string]any:
		if len(x) > 0 {
			c.refuse(fmt.Sprintf("%s is an object; it must be a list of strings", key))
		}
		return nil
	default:
		c.refuse(fmt.Sprintf("%s is a %s; it must be a list of strings", key, kindOf(v)))
		return nil
	}
	out := make([]string, 0, len(items))
	for j, it := range items {
		s, ok := scalar(it)
		if !ok {
			c.refuse(fmt.Sprintf("%s[%d] is a %s; it must be a string", key, j+1, kindOf(it)))
			continue
		}
		if _, isString := it.(string); !isString {
			c.note(LevelInfo, "%s[%d] is a %s; it is passed as the text %q", key, j+1, kindOf(it), s)
		}
		out = append(out, s)
	}
	return out
}

func (c *checker) dict(raw map[string]any, key string) map[string]string {
	v, ok := raw[key]
	if !ok || v == nil {
		return nil
	}
	m, isObject := values(v)
	if !isObject {
		switch x, isList := v.([]any); {
		case isList && len(x) == 0:
		case isList:
			c.refuse(fmt.Sprintf("%s is a list; it must be an object of names to strings", key))
		default:
			c.refuse(fmt.Sprintf("%s is a %s; it must be an object of names to strings", key, kindOf(v)))
		}
		return nil
	}
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		val := m[k]
		if val == nil {
			c.note(LevelInfo, "%s.%s is null; it is left out", key, k)
			continue
		}
		s, ok := scalar(val)
		if !ok {
			c.refuse(fmt.Sprintf("%s.%s is a %s; it must be a string", key, k, kindOf(val)))
			continue
		}
		if _, isString := val.(string); !isString {
			c.note(LevelInfo, "%s.%s is a %s; it is passed as the text %q", key, k, kindOf(val), s)
		}
		out[k] = s
	}
	return out
}

// validEntry is Entry.Validate, with a URL holding ${…} references checked
// as its defaults would make it, or not at all when it starts with one
// that has none.
func validEntry(e mcp.Entry) error {
	if e.Transport == mcp.TransportHTTP && strings.Contains(e.URL, "${") {
		probe := expandString(e.URL, nil, func(string) {}, 0)
		if strings.HasPrefix(probe, "${") {
			e.URL = "https://checked.when.expanded/"
		} else {
			e.URL = probe
			for _, r := range Refs(probe) {
				e.URL = strings.ReplaceAll(e.URL, r.Text, "x")
			}
		}
	}
	return e.Validate()
}

// check returns the warnings and remarks on a valid entry: placeholders a
// README left, the variables it needs at connect time.
func check(e mcp.Entry) []Note {
	var notes []Note
	add := func(level, format string, args ...any) {
		notes = append(notes, Note{Level: level, Text: fmt.Sprintf(format, args...)})
	}
	type field struct{ name, value string }
	var fields []field
	fields = append(fields, field{"command", e.Command})
	for i, a := range e.Args {
		fields = append(fields, field{fmt.Sprintf("args[%d]", i+1), a})
	}
	for _, k := range slices.Sorted(maps.Keys(e.Env)) {
		fields = append(fields, field{"env." + k, e.Env[k]})
	}
	fields = append(fields, field{"cwd", e.Cwd}, field{"url", e.URL})
	for _, k := range slices.Sorted(maps.Keys(e.Headers)) {
		fields = append(fields, field{"headers." + k, e.Headers[k]})
	}
	var needs []string
	folder := map[string]bool{}
	own := map[string][]string{} // tai's own credentials referenced, by field
	for _, f := range fields {
		if f.value == "" {
			continue
		}
		if screen.LineBreak(f.name) || screen.LineBreak(f.value) && !strings.HasPrefix(f.name, "headers.") {
			add(LevelWarn, "%s holds a line break (shown as \\n): no real server needs a line break in its command line; read every word before you add it", screen.VisibleLine(f.name))
		}
		if p := Placeholder(f.value); p != "" {
			add(LevelWarn, "%s holds the placeholder %q left for you to fill in: %s", f.name, p, placeholderFix(e.Name, f.name))
		}
		if strings.Contains(f.value, "${") {
			for _, r := range Refs(f.value) {
				if slices.Contains(taiCredentials, r.Name) {
					own[r.Name] = append(own[r.Name], f.name)
				}
				switch {
				case IsFolderVar(r.Name):
					folder[r.Name] = true
				case !strings.HasPrefix(f.name, "env.") && ownEnv(e, r.Name):
					// the entry's own env gives it
				case r.Kind != "input" && !r.HasDefault && !slices.Contains(needs, r.Name):
					needs = append(needs, r.Name)
				}
			}
			if malformedRef(f.value) {
				add(LevelWarn, "%s has a ${ that does not start a well-formed ${NAME} reference; it is passed as written", f.name)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(own)) {
		add(LevelWarn, "%s hands tai's own credential ${%s} to this server; go on only if you mean to give the server that key", strings.Join(own[name], ", "), name)
	}
	for _, name := range slices.Sorted(maps.Keys(folder)) {
		if name == "CLAUDE_PLUGIN_ROOT" {
			add(LevelWarn, "${%s} stands for a Claude Code plugin's folder; tai puts the folder it runs in there, so start tai in the plugin's folder or write the path instead", name)
		} else {
			add(LevelInfo, "${%s} stands for the project folder: tai puts the folder it runs in there", name)
		}
	}
	if len(needs) > 0 {
		refs := make([]string, len(needs))
		for i, n := range needs {
			refs[i] = "${" + n + "}"
		}
		add(LevelInfo, "needs %s when it starts: set each in the environment, or in the vault with tai.vault.secret_set(%q, \"…\")", strings.Join(refs, ", "), needs[0])
	}
	if e.Transport == mcp.TransportHTTP {
		if u, err := url.Parse(e.URL); err == nil && (u.Scheme == "http") && !loopback(u.Hostname()) && !strings.Contains(u.Host, "${") {
			add(LevelWarn, "url uses plain http:// to a host that is not this machine; headers and results travel unencrypted")
		}
	}
	return notes
}

// placeholderFix says how to fill in a placeholder in field of server:
// a secret in env or a header goes to the vault and is referenced.
func placeholderFix(server, field string) string {
	switch {
	case strings.HasPrefix(field, "env."):
		name := EnvName(field[len("env."):])
		return fmt.Sprintf("store the real value with tai.vault.secret_set(%q, \"…\") and write \"${%s}\" here, or write the value itself", name, name)
	case field == "headers.Authorization" || strings.EqualFold(field, "headers.authorization"):
		name := EnvName(server) + "_TOKEN"
		return fmt.Sprintf("store the token with tai.vault.secret_set(%q, \"…\") and write \"Bearer ${%s}\" here, or write the token itself", name, name)
	case strings.HasPrefix(field, "headers."):
		name := EnvName(server + "_" + field[len("headers."):])
		return fmt.Sprintf("store the real value with tai.vault.secret_set(%q, \"…\") and write \"${%s}\" here, or write the value itself", name, name)
	}
	return "replace it with the real value (a secret can go in the vault with tai.vault.secret_set(\"NAME\", \"…\") and be written ${NAME})"
}

// refersTo reports whether any expanded field of e references name.
func refersTo(e mcp.Entry, name string) bool {
	fields := append([]string{e.Command, e.URL, e.Cwd}, e.Args...)
	for _, v := range e.Env {
		fields = append(fields, v)
	}
	for _, v := range e.Headers {
		fields = append(fields, v)
	}
	for _, f := range fields {
		if strings.Contains(f, "${") {
			for _, r := range Refs(f) {
				if r.Name == name {
					return true
				}
			}
		}
	}
	return false
}

// ownEnv reports whether the entry's env defines name itself (not as a
// pass-through ${name}).
func ownEnv(e mcp.Entry, name string) bool {
	v, ok := e.Env[name]
	return ok && !strings.Contains(v, "${"+name)
}

// taiCredentials are the variables tai's own model keys and vault
// passphrase live in: a pasted entry naming one would send it to the
// server.
var taiCredentials = []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "TAI_VAULT_PASSPHRASE"}

func loopback(host string) bool {
	return host == "localhost" || host == "127.0.0.1" || host == "::1" || strings.HasSuffix(host, ".localhost")
}

// placeholderPatterns match the stand-ins READMEs leave for a value the
// person must supply.
var placeholderPatterns = []*regexp.Regexp{
	regexp.MustCompile(`<<?[^<>]{1,80}>>?`),                                              // <token>, <<PASTE_HERE>>, <your GHES domain>
	regexp.MustCompile(`(?i)(^|[^a-z0-9])(your[-_. ]?|my[-_])[a-z][a-z0-9_.-]*`),         // YOUR_API_KEY, your-token, my_server
	regexp.MustCompile(`(?i)(^|[^a-z0-9])(/)?path/to(/[^\s,"]*)?`),                       // /path/to/allowed/files
	regexp.MustCompile(`(?i)[a-z0-9]+[_-](x{3,}|\*{3,}|\.{3,}|…)`),                       // ghp_xxx, ntn_****, xoxp-...
	regexp.MustCompile(`(?i)^(x{3,}|\*{3,}|\.{3,}|…)$`),                                  // xxx
	regexp.MustCompile(`(?i)[a-z0-9_]*PASTE[a-z0-9_]*|[a-z0-9_]*_HERE\b`),                // PASTE_TOKEN_HERE
	regexp.MustCompile(`(?i)(/Users|/home|C:\\Users)[/\\](username|user|you|me|name)\b`), // /Users/username
	regexp.MustCompile(`(?i)^(value|header_value|header_name|env_var|changeme|change_me|replace_me|todo|token|api_key|apikey|secret|password)$`),
	regexp.MustCompile(`(?i)(^|[./@])example\.(com|org|net)\b`), // hosts reserved for examples
}

// placeholderHints are substrings (lower case) of which every placeholder
// pattern needs one, so most values are passed over without a regexp.
var placeholderHints = []string{"<", "your", "my-", "my_", "path/to", "xxx", "***", "...", "…", "paste", "_here", "users", "home/", "example.",
	"value", "header_", "env_var", "change", "replace", "todo", "token", "key", "secret", "password"}

func mayHoldPlaceholder(s string) bool {
	l := strings.ToLower(s)
	for _, h := range placeholderHints {
		if strings.Contains(l, h) {
			return true
		}
	}
	return false
}

// Placeholder returns the placeholder a README left in s (YOUR_API_KEY,
// <token>, /path/to/…, ghp_xxx), or "" when s holds none it knows.
func Placeholder(s string) string {
	for _, r := range Refs(s) {
		// what a reference names is the person's own variable
		s = strings.Replace(s, r.Text, " ", 1)
	}
	if !mayHoldPlaceholder(s) {
		return ""
	}
	for _, p := range placeholderPatterns {
		if m := p.FindString(s); m != "" {
			m = strings.TrimLeft(m, " .@:=-_")
			if len(m) > 60 {
				m = m[:60] + "…"
			}
			return m
		}
	}
	return ""
}
