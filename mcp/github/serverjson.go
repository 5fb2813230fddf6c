package github

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"tai/mcp"
	"tai/mcp/config"
)

// Candidate is one way to run a server that a repository's file
// describes, as an entry ready for the consent screen.
type Candidate struct {
	// Entry is the canonical entry; its ${NAME} references are resolved
	// at use time like any pasted config's.
	Entry mcp.Entry
	// Kind is "remote" (a URL someone hosts) or "package" (a command).
	Kind string
	// From says where in the file it came from ("remotes[0]").
	From string
	// Line is the file's line the candidate starts at (1-based).
	Line int
}

// Candidate kinds.
const (
	KindRemote  = "remote"
	KindPackage = "package"
)

// maxItems caps the packages, remotes, arguments and variables read from
// one server.json: a file with more is not a recipe a person wrote.
const maxItems = 64

// legacySchema is the first schema date with camelCase keys; files with
// an older $schema (2025-07-09 and before) use snake_case.
const legacySchema = "2025-09-16"

var (
	schemaDate = regexp.MustCompile(`\d{4}-\d{2}-\d{2}`)
	varRef     = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_.-]*)\}`)
	envAssign  = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)=\{([A-Za-z_][A-Za-z0-9_.-]*)\}$`)
	unsafeName = regexp.MustCompile(`[^a-z0-9_-]+`)
	upperName  = regexp.MustCompile(`[^A-Z0-9_]+`)
)

// ServerJSON maps an official MCP registry server.json (text) to candidate
// entries: each streamable-http remote becomes an http entry, each npm,
// pypi or oci package a command (npx -y id@version, uvx id==version,
// docker run -i --rm image) with its runtimeHint, runtimeArguments,
// packageArguments and environmentVariables. Secret or required inputs
// become ${NAME} references with a note saying to store NAME; optional
// inputs nobody filled in are left out with a note. sse remotes, mcpb
// packages, packages serving local HTTP and unknown registries are refused
// with a note giving the reason. The $schema decides the key style: the
// 2025-07-09 schema and older use snake_case, later ones camelCase.
func ServerJSON(text string) ([]Candidate, []config.Note, error) {
	var raw any
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, nil, fmt.Errorf("server.json is not JSON: %v", err)
	}
	top, ok := raw.(map[string]any)
	if !ok {
		return nil, nil, fmt.Errorf("server.json holds a %T, not an object", raw)
	}
	m := &mapper{text: text}
	schema, _ := top["$schema"].(string)
	date := schemaDate.FindString(schema)
	switch {
	case schema == "":
		m.note(config.LevelInfo, "server.json has no $schema: read in the current (camelCase) form, snake_case keys accepted")
		raw = camelize(raw, 0)
	case date != "" && date < legacySchema:
		m.note(config.LevelInfo, fmt.Sprintf("server.json uses the %s schema: its snake_case keys are read", date))
		raw = camelize(raw, 0)
	}
	var doc serverDoc
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("server.json: %v", err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, nil, fmt.Errorf("server.json does not have the registry's shape: %v", err)
	}
	m.name = entryName(doc.Name)
	if m.name == "" {
		m.name = entryName(doc.Title)
	}
	if m.name == "" {
		m.name = "server"
	}
	for i := range m.notes {
		m.notes[i].Server = m.name
	}
	if doc.Repository.Subfolder != "" {
		m.note(config.LevelInfo, fmt.Sprintf("server.json says the server's code is in the folder %s of %s", doc.Repository.Subfolder, doc.Repository.URL))
	}
	if len(doc.Remotes) > maxItems || len(doc.Packages) > maxItems {
		return nil, nil, fmt.Errorf("server.json lists %d remotes and %d packages, more than the %d the resolver reads", len(doc.Remotes), len(doc.Packages), maxItems)
	}
	var out []Candidate
	for i, r := range doc.Remotes {
		if c, ok := m.remote(i, r); ok {
			out = append(out, c)
		}
	}
	for i, p := range doc.Packages {
		if c, ok := m.pkg(i, p, doc.Version); ok {
			out = append(out, c)
		}
	}
	return out, m.notes, nil
}

// serverDoc is the part of server.json the mapping reads (camelCase).
type serverDoc struct {
	Name       string `json:"name"`
	Title      string `json:"title"`
	Version    string `json:"version"`
	Repository struct {
		URL       string `json:"url"`
		Subfolder string `json:"subfolder"`
	} `json:"repository"`
	Packages []pkgDoc    `json:"packages"`
	Remotes  []remoteDoc `json:"remotes"`
}

type pkgDoc struct {
	RegistryType         string     `json:"registryType"`
	RegistryName         string     `json:"registryName"` // before 2025-07-09
	Identifier           string     `json:"identifier"`
	Name                 string     `json:"name"` // before 2025-07-09
	Version              string     `json:"version"`
	RuntimeHint          string     `json:"runtimeHint"`
	Transport            remoteDoc  `json:"transport"`
	RuntimeArguments     []inputDoc `json:"runtimeArguments"`
	PackageArguments     []inputDoc `json:"packageArguments"`
	EnvironmentVariables []inputDoc `json:"environmentVariables"`
}

type remoteDoc struct {
	Type      string              `json:"type"`
	URL       string              `json:"url"`
	Headers   []inputDoc          `json:"headers"`
	Variables map[string]inputDoc `json:"variables"`
}

type inputDoc struct {
	Type        string              `json:"type"`
	Name        string              `json:"name"`
	Value       flexString          `json:"value"`
	ValueHint   string              `json:"valueHint"`
	Default     flexString          `json:"default"`
	IsRequired  bool                `json:"isRequired"`
	IsSecret    bool                `json:"isSecret"`
	Description string              `json:"description"`
	Variables   map[string]inputDoc `json:"variables"`
}

// flexString reads a JSON string, number or boolean as its text.
type flexString string

func (f *flexString) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*f = flexString(s)
		return nil
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch v.(type) {
	case bool, float64, nil:
		*f = flexString(fmt.Sprint(v))
		if v == nil {
			*f = ""
		}
		return nil
	}
	return fmt.Errorf("%s is not a string", bytes.TrimSpace(b))
}

// mapper holds what one mapping collects.
type mapper struct {
	text  string
	name  string
	notes []config.Note
}

func (m *mapper) note(level, text string) {
	m.notes = append(m.notes, config.Note{Server: m.name, Level: level, Text: text})
}

// remote maps remotes[i].
func (m *mapper) remote(i int, r remoteDoc) (Candidate, bool) {
	from := fmt.Sprintf("server.json remotes[%d]", i)
	switch r.Type {
	case "streamable-http", "http":
	case "sse":
		m.note(config.LevelRefused, fmt.Sprintf("%s (%s) uses the legacy HTTP+SSE transport, which tai does not speak", from, r.URL))
		return Candidate{}, false
	default:
		m.note(config.LevelRefused, fmt.Sprintf("%s has transport %q; tai speaks stdio and streamable-http", from, r.Type))
		return Candidate{}, false
	}
	url, ok := m.fill(from+" url", r.URL, r.Variables, true, "")
	if !ok || url == "" {
		return Candidate{}, false
	}
	e := mcp.Entry{Name: m.name, Transport: mcp.TransportHTTP, URL: url}
	if len(r.Headers) > maxItems {
		m.note(config.LevelRefused, fmt.Sprintf("%s lists %d headers, more than %d", from, len(r.Headers), maxItems))
		return Candidate{}, false
	}
	for _, h := range r.Headers {
		if h.Name == "" {
			continue
		}
		v, ok := m.input(fmt.Sprintf("%s header %s", from, h.Name), h, upper(m.name+"_"+h.Name))
		if !ok {
			continue
		}
		if e.Headers == nil {
			e.Headers = map[string]string{}
		}
		e.Headers[h.Name] = v
	}
	return Candidate{Entry: e, Kind: KindRemote, From: from, Line: m.line(r.URL)}, true
}

// pkg maps packages[i].
func (m *mapper) pkg(i int, p pkgDoc, docVersion string) (Candidate, bool) {
	from := fmt.Sprintf("server.json packages[%d]", i)
	reg := p.RegistryType
	if reg == "" {
		reg = p.RegistryName
	}
	id := p.Identifier
	if id == "" {
		id = p.Name
	}
	if id == "" {
		m.note(config.LevelRefused, from+" has no identifier")
		return Candidate{}, false
	}
	from += " (" + reg + " " + id + ")"
	switch p.Transport.Type {
	case "", "stdio":
	case "streamable-http", "sse", "http":
		m.note(config.LevelRefused, fmt.Sprintf("%s runs a local HTTP server (transport %s%s): start it yourself and add its URL", from, p.Transport.Type, suffix(" at ", p.Transport.URL, "")))
		return Candidate{}, false
	default:
		m.note(config.LevelRefused, fmt.Sprintf("%s has transport %q; tai runs stdio packages", from, p.Transport.Type))
		return Candidate{}, false
	}
	version := p.Version
	if version == "" {
		version = docVersion
	}
	if strings.Contains(version, "{") || strings.Contains(version, "$") {
		m.note(config.LevelWarn, fmt.Sprintf("%s: version %q is an unrendered template placeholder: left out, the newest release runs", from, version))
		version = ""
	}
	if len(p.RuntimeArguments) > maxItems || len(p.PackageArguments) > maxItems || len(p.EnvironmentVariables) > maxItems {
		m.note(config.LevelRefused, fmt.Sprintf("%s has more than %d arguments or variables", from, maxItems))
		return Candidate{}, false
	}
	e := mcp.Entry{Name: m.name, Transport: mcp.TransportStdio}
	hint := p.RuntimeHint
	var runtime []string
	for _, a := range p.RuntimeArguments {
		runtime = append(runtime, m.arg(from+" runtime argument", a)...)
	}
	var pkgArgs []string
	for _, a := range p.PackageArguments {
		pkgArgs = append(pkgArgs, m.arg(from+" package argument", a)...)
	}
	env := map[string]string{}
	var envNames []string
	for _, v := range p.EnvironmentVariables {
		if v.Name == "" {
			continue
		}
		val, ok := m.input(from+" variable "+v.Name, v, upper(v.Name))
		if ok {
			env[v.Name] = val
			envNames = append(envNames, v.Name)
		}
	}
	switch reg {
	case "npm":
		e.Command = cmp.Or(hint, "npx")
		if e.Command == "npx" && !hasAny(runtime, "-y", "--yes") {
			runtime = append([]string{"-y"}, runtime...)
		}
		if version != "" {
			id += "@" + version
		}
		e.Args = append(append(runtime, id), pkgArgs...)
	case "pypi":
		e.Command = cmp.Or(hint, "uvx")
		if version != "" {
			id += "==" + version
		}
		e.Args = append(append(runtime, id), pkgArgs...)
	case "oci", "docker":
		e.Command = cmp.Or(hint, "docker")
		if i := strings.LastIndex(id, ":"); i > strings.LastIndex(id, "/") && strings.ContainsAny(id[i:], "{$") {
			m.note(config.LevelWarn, fmt.Sprintf("%s: image tag %q is an unrendered template placeholder: left out, the image's latest tag runs", from, id[i+1:]))
			id = id[:i]
		} else if i < 0 || i < strings.LastIndex(id, "/") {
			if version != "" && !strings.Contains(id, "@") {
				id += ":" + version
			}
		}
		args := []string{"run", "-i", "--rm"}
		args = append(args, runtime...)
		for _, n := range envNames {
			args = append(args, "-e", n)
		}
		e.Args = append(append(args, id), pkgArgs...)
	case "mcpb":
		m.note(config.LevelRefused, from+" is an MCPB bundle (a desktop-extension download), not a command or URL tai can run")
		return Candidate{}, false
	default:
		m.note(config.LevelRefused, fmt.Sprintf("%s: tai knows no runner for %q packages (it runs npm, pypi and oci)", from, reg))
		return Candidate{}, false
	}
	if len(env) > 0 {
		e.Env = env
	}
	return Candidate{Entry: e, Kind: KindPackage, From: from, Line: m.line(p.Identifier + p.Name)}, true
}

// arg maps one runtime or package argument to its words: fixed values are
// kept, a value needing input is kept as a ${NAME} reference when the
// argument is required and left out, with a note, when it is not.
func (m *mapper) arg(where string, a inputDoc) []string {
	value := string(a.Value)
	if value == "" {
		value = string(a.Default)
	}
	needs := value == "" && a.Type != "named"
	if !needs {
		for _, v := range varRef.FindAllStringSubmatch(value, -1) {
			if iv, ok := a.Variables[v[1]]; !ok || (iv.Value == "" && (iv.Default == "" || iv.IsSecret)) {
				needs = true
			}
		}
	}
	label := strings.TrimSpace(a.Name + " " + value)
	if label == "" {
		label = a.ValueHint
	}
	if needs && !a.IsRequired {
		m.note(config.LevelInfo, fmt.Sprintf("%s %s is optional and needs a value: left out%s", where, label, suffix(" (", a.Description, ")")))
		return nil
	}
	if value == "" && a.Type != "named" {
		ref := "${" + upper(cmp.Or(a.ValueHint, a.Name, m.name+"_ARG")) + "}"
		m.note(config.LevelWarn, fmt.Sprintf("%s is required: store its value as %s", where, ref[2:len(ref)-1]))
		value = ref
	} else if value != "" {
		base := ""
		if sub := envAssign.FindStringSubmatch(value); sub != nil {
			base = sub[1]
		}
		v, ok := m.fill(where+" "+label, value, a.Variables, a.IsRequired, base)
		if !ok {
			return nil
		}
		value = v
	}
	switch {
	case a.Type == "named" && value != "":
		return []string{a.Name, value}
	case a.Type == "named":
		return []string{a.Name}
	}
	return []string{value}
}

// input maps a header or an environment variable to its value: its own
// value (with {variables} filled in), else a ${ref} when it is required
// (and a note saying to store it), else nothing (a note for a secret).
func (m *mapper) input(where string, in inputDoc, ref string) (string, bool) {
	if in.Value != "" {
		return m.fill(where, string(in.Value), in.Variables, true, ref)
	}
	if in.IsRequired {
		if in.Default != "" && !in.IsSecret {
			return string(in.Default), true
		}
		m.note(config.LevelWarn, fmt.Sprintf("%s is required: store it as the vault secret %s (or set it in the environment)%s", where, ref, suffix(": ", in.Description, "")))
		return "${" + ref + "}", true
	}
	if in.IsSecret {
		m.note(config.LevelInfo, fmt.Sprintf("%s is optional and secret: left out; to send it, add it as ${%s} and store %s%s", where, ref, ref, suffix(" (", in.Description, ")")))
	}
	return "", false
}

// fill replaces each {variable} of value: its value, its default when not
// secret, else a ${NAME} reference (base names it when given) with a note
// to store it. An optional value with a missing input is left out.
func (m *mapper) fill(where, value string, vars map[string]inputDoc, required bool, base string) (string, bool) {
	ok := true
	out := varRef.ReplaceAllStringFunc(value, func(s string) string {
		name := s[1 : len(s)-1]
		v, known := vars[name]
		switch {
		case known && v.Value != "":
			return string(v.Value)
		case known && v.Default != "" && !v.IsSecret:
			return string(v.Default)
		}
		ref := base
		if ref == "" {
			ref = upper(m.name + "_" + name)
		}
		if !required {
			ok = false
			return s
		}
		m.note(config.LevelWarn, fmt.Sprintf("%s needs %s: store it as the vault secret %s (or set it in the environment)", where, name, ref))
		return "${" + ref + "}"
	})
	if !ok {
		m.note(config.LevelInfo, fmt.Sprintf("%s is optional and needs a value: left out", where))
	}
	return out, ok
}

// line returns the 1-based line of needle's first appearance in the file.
func (m *mapper) line(needle string) int {
	i := strings.Index(m.text, needle)
	if needle == "" || i < 0 {
		return 1
	}
	return strings.Count(m.text[:i], "\n") + 1
}

// camelize rewrites snake_case keys to camelCase, recursively.
func camelize(v any, depth int) any {
	if depth > 32 {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			ck := k
			if strings.Contains(k, "_") && !strings.HasPrefix(k, "$") {
				parts := strings.Split(k, "_")
				for i := 1; i < len(parts); i++ {
					if parts[i] != "" {
						parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
					}
				}
				ck = strings.Join(parts, "")
			}
			if _, taken := x[ck]; taken && ck != k {
				ck = k
			}
			out[ck] = camelize(e, depth+1)
		}
		return out
	case []any:
		for i, e := range x {
			x[i] = camelize(e, depth+1)
		}
	}
	return v
}

// entryName makes a server name from a registry name
// ("io.github.upstash/context7" -> "context7").
func entryName(s string) string {
	if i := strings.LastIndex(s, "/"); i >= 0 {
		s = s[i+1:]
	}
	s = strings.Trim(unsafeName.ReplaceAllString(strings.ToLower(s), "-"), "-_")
	if len(s) > 64 {
		s = s[:64]
	}
	return s
}

// upper makes an environment-variable name.
func upper(s string) string {
	return strings.Trim(upperName.ReplaceAllString(strings.ToUpper(s), "_"), "_")
}

func hasAny(list []string, words ...string) bool {
	for _, w := range list {
		for _, x := range words {
			if w == x {
				return true
			}
		}
	}
	return false
}

func suffix(pre, s, post string) string {
	if s == "" {
		return ""
	}
	return pre + s + post
}
