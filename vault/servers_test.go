package vault

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestServerPutGetList(t *testing.T) {
	s := newStore(t, nil)
	srv := Server{
		Name: "github", Transport: "stdio", Command: "npx", Args: []string{"-y", "server"},
		Env: map[string]string{"TOKEN": "${GITHUB_TOKEN}"}, Cwd: "/tmp", Allow: []string{"a"}, Deny: []string{"b"},
		Source: "config-json",
	}
	if err := s.ServerPut(srv); err != nil {
		t.Fatal(err)
	}
	got, err := s.ServerGet("github")
	if err != nil {
		t.Fatal(err)
	}
	if got.Created.IsZero() || !got.Created.Equal(got.Updated) {
		t.Fatalf("first put: created %v updated %v", got.Created, got.Updated)
	}
	want := srv
	want.Created, want.Updated = got.Created, got.Updated
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ServerGet = %+v\nwant %+v", got, want)
	}

	srv.URL = "changed"
	if err := s.ServerPut(srv); err != nil {
		t.Fatal(err)
	}
	again, _ := s.ServerGet("github")
	if !again.Created.Equal(got.Created) || !again.Updated.After(got.Created) || again.URL != "changed" {
		t.Fatalf("second put: %+v (first created %v)", again, got.Created)
	}

	for _, name := range []string{"zeta", "alpha"} {
		if err := s.ServerPut(Server{Name: name, Transport: "http", URL: "http://127.0.0.1/" + name}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := s.ServerList()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range list {
		names = append(names, l.Name)
	}
	if strings.Join(names, ",") != "alpha,github,zeta" {
		t.Fatalf("ServerList order = %v", names)
	}
	if _, err := s.ServerGet("missing"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("ServerGet(missing) = %v", err)
	}
	for _, bad := range []string{"", "a\nb", strings.Repeat("x", 257)} {
		if err := s.ServerPut(Server{Name: bad}); err == nil || !strings.Contains(err.Error(), "server name") {
			t.Errorf("ServerPut(%q) = %v", bad, err)
		}
	}
}

func TestServerRows(t *testing.T) {
	s := newStore(t, nil)
	// "a" is a prefix of "ab": their rows must never mix.
	for _, name := range []string{"a", "ab"} {
		if err := s.ServerPut(Server{Name: name, Transport: "stdio", Command: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.ServerProfileSet("a", "work", true))
	must(s.ServerProfileSet("a", "home", false))
	must(s.ServerProfileSet("ab", "work", false))
	must(s.ServerProfileSet("a", "home", true))
	at := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	must(s.PinPut(ToolPin{Server: "a", Tool: "read", Hash: "h1", Updated: at}))
	must(s.PinPut(ToolPin{Server: "a", Tool: "bwrite", Hash: "h2"}))
	must(s.PinPut(ToolPin{Server: "ab", Tool: "read", Hash: "h3"}))
	must(s.ToolsReplace("a", []ServerTool{
		{Tool: "read", Description: "reads", Schema: json.RawMessage(`{"type":"object"}`)},
		{Tool: "bwrite", Description: "writes"},
	}))
	must(s.ToolsReplace("ab", []ServerTool{{Tool: "only", Description: "x"}}))

	profiles, err := s.ServerProfiles("a")
	if err != nil || !reflect.DeepEqual(profiles, map[string]bool{"work": true, "home": true}) {
		t.Fatalf("ServerProfiles(a) = %v, %v", profiles, err)
	}
	if p, _ := s.ServerProfiles("ab"); !reflect.DeepEqual(p, map[string]bool{"work": false}) {
		t.Fatalf("ServerProfiles(ab) = %v", p)
	}
	if p, err := s.ServerProfiles("none"); err != nil || len(p) != 0 || p == nil {
		t.Fatalf("ServerProfiles(none) = %v, %v; want an empty map", p, err)
	}

	pins, err := s.Pins("a")
	if err != nil || len(pins) != 2 || pins[0].Tool != "bwrite" || pins[1].Tool != "read" || pins[1].Hash != "h1" ||
		!pins[1].Updated.Equal(at) || pins[0].Updated.IsZero() || pins[0].Server != "a" {
		t.Fatalf("Pins(a) = %+v, %v", pins, err)
	}

	tools, err := s.Tools("a")
	if err != nil || len(tools) != 2 || tools[1].Tool != "read" || string(tools[1].Schema) != `{"type":"object"}` || tools[0].Server != "a" {
		t.Fatalf("Tools(a) = %+v, %v", tools, err)
	}
	// Replacing drops tools no longer listed.
	must(s.ToolsReplace("a", []ServerTool{{Tool: "new", Description: "n"}}))
	if tools, _ := s.Tools("a"); len(tools) != 1 || tools[0].Tool != "new" {
		t.Fatalf("Tools(a) after replace = %+v", tools)
	}
	if err := s.ToolsReplace("a", []ServerTool{{Tool: "x"}, {Tool: "x"}}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("duplicate tools: %v", err)
	}

	// Rows need a stored server.
	for name, err := range map[string]error{
		"profile": s.ServerProfileSet("ghost", "work", true),
		"pin":     s.PinPut(ToolPin{Server: "ghost", Tool: "t"}),
		"tools":   s.ToolsReplace("ghost", nil),
	} {
		if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "ghost") {
			t.Errorf("%s for a missing server = %v", name, err)
		}
	}

	// Delete takes the server's rows with it, and only its rows.
	must(s.ServerDelete("a"))
	if _, err := s.ServerGet("a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("ServerGet after delete = %v", err)
	}
	if p, _ := s.ServerProfiles("a"); len(p) != 0 {
		t.Fatalf("profiles left: %v", p)
	}
	if p, _ := s.Pins("a"); len(p) != 0 {
		t.Fatalf("pins left: %v", p)
	}
	if tl, _ := s.Tools("a"); len(tl) != 0 {
		t.Fatalf("tools left: %v", tl)
	}
	if p, _ := s.Pins("ab"); len(p) != 1 {
		t.Fatalf("ab's pins went too: %v", p)
	}
	if tl, _ := s.Tools("ab"); len(tl) != 1 {
		t.Fatalf("ab's tools went too: %v", tl)
	}
	if err := s.ServerDelete("a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second ServerDelete = %v", err)
	}
}

func TestProfiles(t *testing.T) {
	s := newStore(t, nil)
	if err := s.ProfilePut("work", json.RawMessage(`{"model":"m"}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.ProfilePut(".current", json.RawMessage(`{"name":"work"}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.ProfilePut("bad", json.RawMessage(`{nope`)); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Fatalf("invalid JSON: %v", err)
	}
	if err := s.ProfilePut("", json.RawMessage(`{}`)); err == nil {
		t.Fatal("empty profile name accepted")
	}
	got, err := s.ProfileGet("work")
	if err != nil || string(got) != `{"model":"m"}` {
		t.Fatalf("ProfileGet = %s, %v", got, err)
	}
	if names, err := s.ProfileList(); err != nil || strings.Join(names, ",") != ".current,work" {
		t.Fatalf("ProfileList = %v, %v", names, err)
	}
	if err := s.ProfileDelete("work"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ProfileGet("work"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("ProfileGet after delete = %v", err)
	}
	if err := s.ProfileDelete("work"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second ProfileDelete = %v", err)
	}
}

func TestServerRegister(t *testing.T) {
	s := newStore(t, nil)
	reg := Registration{
		Server:  Server{Name: "memory", Transport: "stdio", Command: "npx", Headers: nil, Source: "config-json", Allow: []string{"a"}, Deny: []string{"b"}},
		Profile: "work", Enabled: false,
		Pins:       []ToolPin{{Tool: "read", Hash: "h1", Description: "reads", Schema: json.RawMessage(`{"type":"object"}`)}},
		Tools:      []ServerTool{{Tool: "read", Description: "reads", Schema: json.RawMessage(`{"type":"object"}`)}},
		MaxServers: 2,
	}
	if err := s.ServerRegister(reg); err != nil {
		t.Fatal(err)
	}
	states, err := s.ServerStates()
	if err != nil {
		t.Fatal(err)
	}
	if len(states) != 1 {
		t.Fatalf("states = %+v", states)
	}
	st := states[0]
	if st.Server.Source != "config-json" || !reflect.DeepEqual(st.Server.Allow, []string{"a"}) || !reflect.DeepEqual(st.Server.Deny, []string{"b"}) {
		t.Fatalf("server = %+v", st.Server)
	}
	if on, ok := st.Profiles["work"]; !ok || on {
		t.Fatalf("profiles = %v, want work stored disabled", st.Profiles)
	}
	if len(st.Pins) != 1 || st.Pins[0].Hash != "h1" || st.Pins[0].Description != "reads" || st.Pins[0].Server != "memory" {
		t.Fatalf("pins = %+v", st.Pins)
	}
	if len(st.Tools) != 1 || st.Tools[0].Tool != "read" {
		t.Fatalf("tools = %+v", st.Tools)
	}
	if err := s.ServerRegister(reg); !errors.Is(err, ErrExists) {
		t.Fatalf("second registration: %v, want ErrExists", err)
	}
	reg.Server.Name = "two"
	if err := s.ServerRegister(reg); err != nil {
		t.Fatal(err)
	}
	reg.Server.Name = "three"
	if err := s.ServerRegister(reg); !errors.Is(err, ErrTooMany) {
		t.Fatalf("over the cap: %v, want ErrTooMany", err)
	}
	if _, err := s.ServerGet("three"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a refused registration left a row: %v", err)
	}
	// A bad tool name stores nothing at all.
	if err := s.ServerDelete("two"); err != nil {
		t.Fatal(err)
	}
	reg.Server.Name = "bad"
	reg.Tools = append(reg.Tools, ServerTool{Tool: "read"})
	if err := s.ServerRegister(reg); err == nil {
		t.Fatal("duplicate tool registered")
	}
	if _, err := s.ServerGet("bad"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a failed registration left a row: %v", err)
	}
	if err := s.ServerConsent("memory", "d1"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ServerGet("memory"); got.Consented != "d1" {
		t.Fatalf("consented = %q", got.Consented)
	}
}

func TestServerStatesSince(t *testing.T) {
	s := newStore(t, nil)
	states, gen, changed, err := s.ServerStatesSince(0)
	if err != nil || !changed || len(states) != 0 {
		t.Fatalf("empty: %v %d %v %v", states, gen, changed, err)
	}
	steps := []struct {
		name string
		do   func() error
	}{
		{"register", func() error {
			return s.ServerRegister(Registration{Server: Server{Name: "a", Transport: "stdio", Command: "x"}, Profile: "p"})
		}},
		{"enable", func() error { return s.ServerProfileSet("a", "p", true) }},
		{"pin", func() error { return s.PinPut(ToolPin{Server: "a", Tool: "t", Hash: "h"}) }},
		{"tools", func() error { return s.ToolsReplace("a", []ServerTool{{Tool: "t"}}) }},
		{"consent", func() error { return s.ServerConsent("a", "d") }},
		{"put", func() error { return s.ServerPut(Server{Name: "a", Transport: "stdio", Command: "y"}) }},
		{"delete", func() error { return s.ServerDelete("a") }},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		_, next, changed, err := s.ServerStatesSince(gen)
		if err != nil || !changed || next <= gen {
			t.Fatalf("after %s: gen %d -> %d, changed %v, %v", st.name, gen, next, changed, err)
		}
		gen = next
		if _, same, changed, err := s.ServerStatesSince(gen); err != nil || changed || same != gen {
			t.Fatalf("after %s, nothing changed: %d %v %v", st.name, same, changed, err)
		}
	}
	// A refused registration changes nothing.
	if err := s.ServerRegister(Registration{Server: Server{Name: "b", Transport: "stdio", Command: "x"}, Profile: "p"}); err != nil {
		t.Fatal(err)
	}
	_, gen, _, _ = s.ServerStatesSince(gen)
	if err := s.ServerRegister(Registration{Server: Server{Name: "b", Transport: "stdio", Command: "x"}, Profile: "p"}); !errors.Is(err, ErrExists) {
		t.Fatal(err)
	}
	if _, _, changed, _ := s.ServerStatesSince(gen); changed {
		t.Fatal("a refused registration bumped the generation")
	}
}

// TestKindsShareTables keeps prompt and instruction pins and rows beside
// a server's tools: a tool listing replaces only tools, a prompt listing
// only prompts, a tool and a prompt of one name stay two rows, and every
// row reads back with its kind.
func TestKindsShareTables(t *testing.T) {
	s := newStore(t, nil)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.ServerPut(Server{Name: "a", Transport: "stdio", Command: "x"}))
	must(s.PinPut(ToolPin{Server: "a", Tool: "greet", Hash: "tool"}))
	must(s.PinPut(ToolPin{Server: "a", Kind: KindPrompt, Tool: "greet", Hash: "prompt"}))
	must(s.PinPut(ToolPin{Server: "a", Kind: KindInstructions, Tool: "instructions", Hash: "instr", Description: "be kind"}))
	must(s.ToolsReplace("a", []ServerTool{{Tool: "greet"}, {Tool: "old"}}))
	must(s.ListingReplace("a", KindPrompt, []ServerTool{{Tool: "greet"}, {Tool: "plan"}}))
	must(s.ToolsReplace("a", []ServerTool{{Tool: "greet"}}))
	must(s.ListingReplace("a", KindPrompt, []ServerTool{{Tool: "plan"}}))

	states, err := s.ServerStates()
	must(err)
	st := states[0]
	var got []string
	for _, p := range append(st.Pins, st.OfferPins...) {
		got = append(got, p.Kind+"/"+p.Tool+"="+p.Hash)
	}
	if want := []string{"/greet=tool", "instructions/instructions=instr", "prompt/greet=prompt"}; !reflect.DeepEqual(got, want) {
		t.Errorf("pins = %v, want %v", got, want)
	}
	got = nil
	for _, r := range append(st.Tools, st.Offers...) {
		got = append(got, r.Kind+"/"+r.Tool)
	}
	if want := []string{"/greet", "prompt/plan"}; !reflect.DeepEqual(got, want) {
		t.Errorf("rows = %v, want %v", got, want)
	}
	if pins, _ := s.Pins("a"); len(pins) != 1 || pins[0].Kind != "" {
		t.Errorf("Pins holds other kinds: %+v", pins)
	}
	must(s.ServerDelete("a"))
	if pins, _ := s.Pins("a"); len(pins) != 0 {
		t.Errorf("pins left after delete: %v", pins)
	}
}
