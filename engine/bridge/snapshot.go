package bridge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"
	"unicode/utf8"

	"tai/engine/llm"
	"tai/mcp"
	"tai/vault"
)

// Pin states of a tool, as mcp_list and mcp_tools show them.
const (
	// StateGranted is a tool whose definition is the one granted.
	StateGranted = "granted"
	// StateWithheld is a tool added or redefined after registration, not
	// offered until a person grants it.
	StateWithheld = "withheld"
	// StateRemoved is a granted tool the server no longer lists.
	StateRemoved = "removed"
)

// snapshot is what the vault held for every server at one read, with the
// bridged names assigned and the offered specs built for one profile (and,
// on demand, for others). Apart from that cache it is never modified after
// newSnapshot.
type snapshot struct {
	gen      uint64              // the vault's servers generation read
	states   []vault.ServerState // the rows, to rebuild for another profile
	maxTools int
	profile  string
	servers  map[string]*serverState
	order    []string            // server names, sorted
	byName   map[string]*bridged // bridged name -> tool
	specs    []llm.ToolSpec      // offered to the profile, sorted by name

	mu    sync.Mutex
	other map[string][]llm.ToolSpec // offered to other profiles, built on demand
}

// specsFor returns the tools offered to a session on profile.
func (s *snapshot) specsFor(profile string) []llm.ToolSpec {
	s.mu.Lock()
	defer s.mu.Unlock()
	if specs, ok := s.other[profile]; ok {
		return specs
	}
	specs := s.offeredTo(profile)
	if s.other == nil {
		s.other = map[string][]llm.ToolSpec{}
	}
	s.other[profile] = specs
	return specs
}

// offeredTo lists the offered tools of the servers enabled for profile,
// sorted by name.
func (s *snapshot) offeredTo(profile string) []llm.ToolSpec {
	var out []llm.ToolSpec
	for _, name := range s.order {
		st := s.servers[name]
		if !st.profiles[profile] {
			continue
		}
		for _, bt := range st.tools {
			if bt.offered() {
				out = append(out, llm.ToolSpec{Name: bt.name, Description: bt.description, Parameters: bt.params})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// serverState is one stored server.
type serverState struct {
	row      vault.Server
	entry    mcp.Entry // as stored: ${VAR} unexpanded
	profiles map[string]bool
	pins     map[string]vault.ToolPin
	tools    []*bridged // the cached listing, sorted by tool
	removed  []string   // pinned tools the listing no longer has
	// prompts is the cached prompt listing, sorted by name (see
	// prompts.go); instructions what the server gave at its last start,
	// when it gave any.
	prompts      []*offeredPrompt
	promptPins   map[string]vault.ToolPin
	instructions *offeredInstructions
	// instructionsPinned says a pin of its instructions exists (empty
	// when it gave none): without one, the first listing is adopted
	// (adoptOffers).
	instructionsPinned bool
}

// bridged is one cached tool of one server.
type bridged struct {
	name   string // mcp_<server>_<tool>
	server string
	tool   string
	// description and params are what the model may see: the cached
	// definition when it is the one granted, else only the reason.
	description string
	params      map[string]any
	hash        string // of the cached definition
	state       string // StateGranted or StateWithheld
	reason      string // why it is not offered ("" when offered)
	cached      vault.ServerTool
}

// offered reports whether the tool is offered at all (enablement aside).
func (t *bridged) offered() bool { return t.reason == "" }

// EntryOf is the canonical entry of a stored server (Enabled, which is
// per profile, left false).
func EntryOf(srv vault.Server) mcp.Entry {
	return mcp.Entry{
		Name: srv.Name, Transport: srv.Transport, Command: srv.Command, Args: srv.Args,
		Env: srv.Env, Cwd: srv.Cwd, URL: srv.URL, Headers: srv.Headers, OAuth: oauthOf(srv.OAuth),
		Allow: srv.Allow, Deny: srv.Deny, Sandbox: sandboxOf(srv.Sandbox), Source: srv.Source,
	}
}

// sandboxOf is the entry's sandbox setting of a stored row's (nil when
// unset). mcp.Sandbox and vault.ServerSandbox have the same fields, so a
// field added to one and not the other stops this from compiling.
func sandboxOf(s *vault.ServerSandbox) *mcp.Sandbox {
	if s == nil {
		return nil
	}
	sb := mcp.Sandbox(*s)
	return &sb
}

// sandboxRow is the stored form of an entry's sandbox setting (nil for
// the default).
func sandboxRow(s *mcp.Sandbox) *vault.ServerSandbox {
	if s.Empty() {
		return nil
	}
	row := vault.ServerSandbox(*s)
	return &row
}

// oauthOf is the entry's OAuth part of a stored row's (nil when unset).
func oauthOf(o *vault.ServerOAuth) *mcp.OAuth {
	if o == nil {
		return nil
	}
	return &mcp.OAuth{ClientID: o.ClientID, ClientSecret: o.ClientSecret, CallbackPort: o.CallbackPort, ClientMetadataURL: o.ClientMetadataURL}
}

// oauthRow is the stored form of an entry's OAuth part (nil when empty).
func oauthRow(o *mcp.OAuth) *vault.ServerOAuth {
	if o.Empty() {
		return nil
	}
	return &vault.ServerOAuth{ClientID: o.ClientID, ClientSecret: o.ClientSecret, CallbackPort: o.CallbackPort, ClientMetadataURL: o.ClientMetadataURL}
}

func newSnapshot(states []vault.ServerState, profile string, maxTools int) *snapshot {
	s := &snapshot{profile: profile, states: states, maxTools: maxTools, servers: map[string]*serverState{}, byName: map[string]*bridged{}}
	type unnamed struct {
		bt      *bridged
		created time.Time
	}
	var pending []unnamed
	for _, st := range states {
		ss := &serverState{row: st.Server, entry: EntryOf(st.Server), profiles: st.Profiles, pins: map[string]vault.ToolPin{}}
		tools, toolPins := st.Tools, st.Pins
		for _, p := range toolPins {
			ss.pins[p.Tool] = p
		}
		ss.offers(st.Offers, st.OfferPins)
		listed := map[string]bool{}
		sort.Slice(tools, func(i, j int) bool { return tools[i].Tool < tools[j].Tool })
		offered := 0
		for _, ct := range tools {
			listed[ct.Tool] = true
			bt := &bridged{server: st.Server.Name, tool: ct.Tool, cached: ct, hash: toolHash(ct.Tool, ct.Description, ct.Schema)}
			pin, pinned := ss.pins[ct.Tool]
			switch {
			case ct.Refused == TaskOnly:
				bt.state, bt.reason = StateWithheld, "not offered: "+TaskOnly
			case ct.Refused != "":
				bt.state, bt.reason = StateWithheld, "refused: "+ct.Refused+"; tai does not offer it, and it cannot be granted until the server lists it within bounds"
			case !pinned:
				bt.state, bt.reason = StateWithheld, "withheld: the server added it after registration; a person must grant it (/mcp grant "+st.Server.Name+" "+ct.Tool+")"
			case pin.Hash != bt.hash:
				bt.state, bt.reason = StateWithheld, "withheld: the server redefined it ("+changed(pin, ct)+") since it was granted; a person must grant it again (/mcp grant "+st.Server.Name+" "+ct.Tool+")"
			default:
				bt.state = StateGranted
			}
			if bt.reason == "" && ss.instructionsWithheld() {
				bt.reason = ss.instructions.reason
			}
			if bt.reason == "" {
				if err := ss.entry.Offers(ct.Tool); err != nil {
					bt.reason = err.Error()
				}
			}
			if bt.reason == "" {
				if offered >= maxTools {
					bt.reason = fmt.Sprintf("not offered: %s lists more than %d tools (MCP_MAX_TOOLS); deny others or allow this one to offer it", st.Server.Name, maxTools)
				} else {
					offered++
				}
			}
			if bt.reason == "" {
				bt.description = modelDescription(ct.Description)
				bt.params = schemaParams(ct.Schema)
			} else {
				bt.description = bt.reason
				bt.params = emptySchema()
			}
			ss.tools = append(ss.tools, bt)
			pending = append(pending, unnamed{bt, st.Server.Created})
		}
		for _, p := range toolPins {
			if !listed[p.Tool] {
				ss.removed = append(ss.removed, p.Tool)
			}
		}
		s.servers[st.Server.Name] = ss
		s.order = append(s.order, st.Server.Name)
	}
	// Names are handed out so that a name stays with the tool it was
	// called by: granted tools before withheld ones, then servers in the
	// order they were registered. A later server, or a tool a server added
	// since, whose name sanitizes to a taken one gets the _2.
	sort.SliceStable(pending, func(i, j int) bool {
		a, b := pending[i], pending[j]
		if ga, gb := a.bt.state == StateGranted, b.bt.state == StateGranted; ga != gb {
			return ga
		}
		if !a.created.Equal(b.created) {
			return a.created.Before(b.created)
		}
		if a.bt.server != b.bt.server {
			return a.bt.server < b.bt.server
		}
		return a.bt.tool < b.bt.tool
	})
	names := newNamer()
	for _, p := range pending {
		p.bt.name = names.name(p.bt.server, p.bt.tool)
		s.byName[p.bt.name] = p.bt
	}
	sort.Strings(s.order)
	s.specs = s.offeredTo(profile)
	return s
}

// changed names what differs between a pin and a cached definition.
func changed(pin vault.ToolPin, ct vault.ServerTool) string {
	var parts []string
	if pin.Description != ct.Description {
		parts = append(parts, "description")
	}
	if canonicalJSON(pin.Schema) != canonicalJSON(ct.Schema) {
		parts = append(parts, "schema")
	}
	switch len(parts) {
	case 0:
		return "definition"
	case 1:
		return parts[0] + " changed"
	}
	return "description and schema changed"
}

func emptySchema() map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{}}
}

// schemaParams decodes a cached inputSchema for a model: passed through as
// sent, with the seed's default {type: object, properties: {}} when it is
// missing or not an object schema.
func schemaParams(raw json.RawMessage) map[string]any {
	if len(bytes.TrimSpace(raw)) == 0 {
		return emptySchema()
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return emptySchema()
	}
	if t, ok := m["type"]; !ok || t != "object" {
		m["type"] = "object"
	}
	if _, ok := m["properties"]; !ok {
		m["properties"] = map[string]any{}
	}
	return m
}

// MaxDescription is the longest tool description the model is sent for a
// bridged tool (Claude Code cuts MCP descriptions at 2048 characters too):
// the text is a server's, untrusted, and goes with every request.
const MaxDescription = 2048

// modelDescription is d cut to MaxDescription bytes on a character
// boundary, saying so.
func modelDescription(d string) string {
	cut, more := cutBytes(d, MaxDescription)
	if more == 0 {
		return d
	}
	return fmt.Sprintf("%s … (description cut: %d bytes more)", cut, more)
}

// cutBytes cuts s to at most n bytes on a character boundary, and says
// how many bytes were cut.
func cutBytes(s string, n int) (cut string, more int) {
	if len(s) <= n {
		return s, 0
	}
	cut = s[:n]
	for len(cut) > 0 && !utf8.ValidString(cut) {
		cut = cut[:len(cut)-1]
	}
	return cut, len(s) - len(cut)
}
