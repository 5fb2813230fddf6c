package config

import (
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"strings"

	"tai/mcp"
)

// Levels of a Note.
const (
	// LevelInfo reports a repair or a mapping the person may want to know.
	LevelInfo = "info"
	// LevelWarn reports something the person must look at before
	// connecting (a placeholder, an ignored field).
	LevelWarn = "warn"
	// LevelRefused reports an entry left out, and why.
	LevelRefused = "refused"
)

// Note is one remark about the pasted text: Server names the entry it is
// about ("" for the text as a whole).
type Note struct {
	Server string `json:"server"`
	Level  string `json:"level"` // "info" | "warn" | "refused"
	Text   string `json:"text"`
}

// Repaired is what Rules make of a document: the entries found, in paste
// order, and the notes on what was mapped, repaired or ignored.
type Repaired struct {
	// Entries hold the canonical fields (name, transport, command, args,
	// env, cwd, url, headers, oauth, allow, deny, enabled) as plain values
	// (enabled is true only when the paste enables the server explicitly):
	// map[string]any or *Object for objects, []any for lists. Any other
	// key left in an entry is named in a note and ignored.
	Entries []map[string]any
	// Notes are added to the notes Normalize returns.
	Notes []Note
}

// Rules repairs a parsed document into raw canonical entries: it finds the
// servers under whatever wrapper the source client uses (mcpServers,
// servers, mcp_servers, context_servers, …) and maps each key to a
// canonical field or notes it as ignored. The lua package builds one from
// stdlib/normalize.lua. A Rules value may be called from several
// goroutines.
type Rules func(doc *Document) (*Repaired, error)

// Options configures Normalize. A nil *Options means defaults.
type Options struct {
	// Name names a bare entry (one server, no wrapper).
	Name string
	// GOOS is the target OS for the npx → cmd /c rule; "" means
	// runtime.GOOS.
	GOOS string
	// Rules are the repair rules; nil means none: the text must then map
	// names to entries with canonical fields already.
	Rules Rules
	// Stored looks up a stored server by name, for a paste that is a bare
	// word; nil means there are none.
	Stored func(name string) (mcp.Entry, bool)
	// Home is the folder ~ stands for in the folders a sandbox grants;
	// "" means the user's home folder.
	Home string
	// Denied are the folders no sandbox grant may reach (the lua package
	// passes the vault's folder and tai.sandbox.deny); nil denies none.
	Denied []Denied
	// Hints word what a person does next in the front end's terms (its
	// REPL's commands): the config package names none itself.
	Hints Hints
}

// Hints say what a person does next, in the front end's terms. A nil
// function adds nothing.
type Hints struct {
	// Resolve says how the server entry of a GitHub repository URL is
	// found (after ErrGitHubURL).
	Resolve func(url string) string
	// ClientSecret says how a person logs in with an OAuth client secret
	// kept in the vault (after the note on a pasted --client-secret).
	ClientSecret func() string
}

// Sources of an entry, as Entry.Source records them.
const (
	SourceJSON     = "config-json"
	SourceTOML     = "config-toml"
	SourceExplicit = "explicit"
)

// ErrGitHubURL reports a pasted GitHub repository URL: those go to the
// resolver, not the normalizer.
var ErrGitHubURL = errors.New("a GitHub repository URL is not a config")

// ErrNoServers reports text that parsed but held no server entry.
var ErrNoServers = errors.New("no MCP server entry found")

var (
	bareWord  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
	bareURL   = regexp.MustCompile(`^(?i)https?://\S+$`)
	githubURL = regexp.MustCompile(`^(?i)(https?://)?(www\.)?github\.com/[^/\s]+/[^/\s]+`)
)

// Normalize parses pasted text and returns canonical entries (Source set
// to config-json / config-toml, explicit for a bare URL or a pasted
// "claude|codex|gemini mcp add" command line, or the stored
// entry's source) and notes; a refused entry appears only as a note.
// Enabled is true only where the paste says so (enabled = true, disabled:
// false): enabling is otherwise an explicit, per-profile step.
// Nothing is stored or spawned. The error is a *SyntaxError for text that
// does not parse, wraps ErrGitHubURL or ErrNoServers, or says why the
// rules failed.
func Normalize(text string, opts *Options) ([]mcp.Entry, []Note, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.GOOS == "" {
		o.GOOS = runtime.GOOS
	}
	t := strings.TrimSpace(text)
	switch {
	case t == "":
		return nil, nil, errors.New("nothing to normalize: paste a JSON or TOML MCP config, a claude/codex/gemini mcp add command line, an http(s) URL, or the name of a stored server")
	case githubURL.MatchString(t) && !strings.ContainsAny(t, "{}\n"):
		err := fmt.Errorf("%w: %s names a repository, which the resolver reads", ErrGitHubURL, t)
		if o.Hints.Resolve != nil {
			err = fmt.Errorf("%w: %s", err, o.Hints.Resolve(t))
		}
		return nil, nil, err
	case bareWord.MatchString(t):
		if o.Stored != nil {
			if e, ok := o.Stored(t); ok {
				return []mcp.Entry{e}, nil, nil
			}
		}
		return nil, nil, fmt.Errorf("%q is not a config and no stored server has that name: paste the server's JSON or TOML block, or an http(s) URL", t)
	}
	var doc *Document
	var notes []Note
	source := SourceJSON
	if line, cli, ok := cliLine(t); ok {
		words, err := SplitWords(line)
		if err != nil {
			return nil, nil, fmt.Errorf("the %s mcp add line cannot be read without a shell: %v; paste the command as the README shows it, or the server's JSON block", cli, err)
		}
		d, more, refused := parseCLI(cli, words, o.Hints)
		if refused != nil {
			return nil, []Note{*refused}, nil
		}
		doc, notes, source = d, more, SourceExplicit
	} else if bareURL.MatchString(t) {
		u := NewObject()
		u.Set("url", t)
		doc = &Document{Value: u, Format: FormatURL}
		source = SourceExplicit
	} else {
		var err error
		doc, notes, err = Parse(text)
		if err != nil {
			return nil, notes, err
		}
		if doc.Format == FormatTOML {
			source = SourceTOML
		}
	}
	doc.Name, doc.GOOS = o.Name, o.GOOS
	rules := o.Rules
	if rules == nil {
		rules = Canonical
	}
	rep, err := rules(doc)
	if err != nil {
		return nil, notes, fmt.Errorf("normalize rules: %w", err)
	}
	if rep == nil {
		rep = &Repaired{}
	}
	notes = append(notes, rep.Notes...)
	if len(rep.Entries) == 0 && !slices.ContainsFunc(rep.Notes, func(n Note) bool { return n.Level == LevelRefused }) {
		return nil, notes, fmt.Errorf("%w in the pasted text: expected an object such as {\"mcpServers\": {\"NAME\": {\"command\": …}}}, a single entry with command or url, or [mcp_servers.NAME] tables in TOML", ErrNoServers)
	}
	entries, more := validate(rep.Entries, source, newGrantRules(&o))
	notes = append(notes, more...)
	if doc.Format == FormatURL && o.Name == "" {
		notes = append(notes, freeNames(entries, o.Stored)...)
	}
	return entries, notes, nil
}

// freeNames renames an entry named after its URL whose name a stored
// server with another address holds: name-2, name-3, … (the same address
// keeps the name: adding it again finds it registered).
func freeNames(entries []mcp.Entry, stored func(string) (mcp.Entry, bool)) []Note {
	if stored == nil {
		return nil
	}
	var notes []Note
	for i, e := range entries {
		taken := func(name string) bool {
			s, ok := stored(name)
			return ok && (s.Transport != mcp.TransportHTTP || s.URL != e.URL)
		}
		if e.Name == "" || !taken(e.Name) {
			continue
		}
		n := 2
		for taken(fmt.Sprintf("%s-%d", e.Name, n)) {
			n++
		}
		name := fmt.Sprintf("%s-%d", e.Name, n)
		notes = append(notes, Note{Server: name, Level: LevelInfo, Text: fmt.Sprintf("named %q: a stored server with another address is named %q", name, e.Name)})
		entries[i].Name = name
	}
	return notes
}

// Canonical is the Rules used when Options.Rules is nil: the document maps
// names to entries that already use the canonical field names (a list of
// entries with a name field is accepted too). It repairs nothing.
func Canonical(doc *Document) (*Repaired, error) {
	rep := &Repaired{}
	add := func(name string, v any) {
		var m map[string]any
		switch x := v.(type) {
		case *Object:
			m = make(map[string]any, len(x.Values))
			for k, e := range x.Values {
				m[k] = e
			}
		case map[string]any:
			m = x
		default:
			rep.Notes = append(rep.Notes, Note{Server: name, Level: LevelRefused, Text: fmt.Sprintf("a %s, not an entry object", kindOf(v))})
			return
		}
		if name != "" {
			m["name"] = name
		}
		rep.Entries = append(rep.Entries, m)
	}
	switch x := doc.Value.(type) {
	case *Object:
		for _, k := range x.Keys {
			add(k, x.Values[k])
		}
	case []any:
		for _, e := range x {
			add("", e)
		}
	}
	return rep, nil
}

// kindOf names the JSON kind of v for messages.
func kindOf(v any) string {
	switch v.(type) {
	case *Object, map[string]any:
		return "object"
	case []any:
		return "list"
	case string:
		return "string"
	case int64, float64:
		return "number"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}
