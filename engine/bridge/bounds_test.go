package bridge

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"tai/engine/llm"
	"tai/engine/tool"
)

// allocated returns the bytes fn allocates.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A server that had a long many-line description granted and then
// changes every line must not make the drift screen's diff quadratic:
// 5,000 lines against 5,000 would fill a 25-million-cell table.
func TestDriftDiffOfLongDescriptionsIsBounded(t *testing.T) {
	var oldDesc, newDesc strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&oldDesc, "old line %d\n", i)
		fmt.Fprintf(&newDesc, "new line %d\n", i)
	}
	var diff string
	got := allocated(func() { diff = driftDiff(oldDesc.String(), nil, newDesc.String(), nil) })
	if limit := uint64(16 << 20); got > limit {
		t.Fatalf("driftDiff of two 5,000-line descriptions allocated %d bytes, want at most %d", got, limit)
	}
	// Every changed line is still shown.
	mustContain(t, "diff", diff, "- old line 0\n", "- old line 4999\n", "+ new line 0\n", "+ new line 4999\n")
}

// Unchanged lines far from any change are folded; the changes and the
// lines around them are shown.
func TestLineDiffFoldsUnchangedRuns(t *testing.T) {
	var a, b []string
	for i := range 20 {
		a = append(a, fmt.Sprint("l", i))
		b = append(b, fmt.Sprint("l", i))
	}
	b[10] = "changed"
	got := lineDiff(strings.Join(a, "\n"), strings.Join(b, "\n"))
	want := "  … 7 unchanged lines\n  l7\n  l8\n  l9\n- l10\n+ changed\n  l11\n  l12\n  l13\n  … 6 unchanged lines\n"
	if got != want {
		t.Fatalf("lineDiff = %q, want %q", got, want)
	}
}

// bombPages are a hostile server's tools over two pages: tools within
// bounds (ok, refloop with $ref loops, which tai never follows, and same,
// listed identically on both pages) beside a tool listed twice with
// different definitions and schema and description bombs, one nested
// deeper than encoding/json reads at all.
func bombPages() [][]string {
	toolName := func(name, desc, schema string) string {
		d, _ := json.Marshal(desc)
		return fmt.Sprintf(`{"name":%q,"description":%s,"inputSchema":%s}`, name, d, schema)
	}
	nest := func(levels int) string {
		return strings.Repeat(`{"type":"object","properties":{"a":`, levels) + `{"type":"string"}` + strings.Repeat("}}", levels)
	}
	ok := toolName("ok", "fine", `{"type":"object","properties":{"x":{"type":"string"}}}`)
	refloop := toolName("refloop", "follows references", `{"type":"object","properties":{"n":{"$ref":"#/$defs/a"},"s":{"$ref":"#"}},`+
		`"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}}}`)
	same := toolName("same", "listed on both pages", `{"type":"object"}`)
	page1 := []string{ok, refloop, same,
		toolName("deep", "nested 100,000 levels", nest(100000)),
		toolName("twice", "the first definition", `{"type":"object"}`),
	}
	page2 := []string{same,
		toolName("deep40", "nested 40 schema levels", nest(40)),
		toolName("enum", "a million choices", `{"type":"object","properties":{"e":{"enum":[`+strings.Repeat("1,", 1000000)+`1]}}}`),
		toolName("required", "requires everything", `{"type":"object","required":[`+strings.Repeat(`"r",`, 200000)+`"r"]}`),
		toolName("propdesc", "a giant property description", `{"type":"object","properties":{"p":{"type":"string","description":"`+strings.Repeat("p", 1<<20)+`"}}}`),
		toolName("longdesc", strings.Repeat("d", 100<<10), `{"type":"object"}`),
		toolName("twice", "the second definition", `{"type":"object"}`),
	}
	return [][]string{page1, page2}
}

// bombListing is bombPages as a hostile server's state file.
func bombListing() string {
	var pages []string
	for _, p := range bombPages() {
		pages = append(pages, "["+strings.Join(p, ",")+"]")
	}
	return strings.Join(pages, pageBreak)
}

// A server listing schema bombs keeps its other tools: each bomb is
// refused with a note naming it and why, never pinned, offered or sent,
// and what the vault keeps and the model is sent stays small.
func TestSchemaBombsAreRefusedOthersKept(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	if err := os.WriteFile(state, []byte(bombListing()), 0o600); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, tool.Yolo, "")
	out := f.add(t, "h", map[string]string{serverEnv: hostileServer, serverStateEnv: state})
	slices.Sort(out.Tools)
	if !slices.Equal(out.Tools, []string{"ok", "refloop", "same"}) {
		t.Fatalf("tools = %v, want ok, refloop, same", out.Tools)
	}
	notes := strings.Join(out.Notes, "\n")
	mustContain(t, "notes", notes,
		"tool \"deep\" refused: its input schema nests 200001 levels deep",
		"tool \"deep40\" refused: its input schema nests 81 levels deep",
		"tool \"enum\" refused: its input schema is 2000",
		"tool \"required\" refused: its input schema is 8000",
		"tool \"propdesc\" refused: its input schema is 1048",
		"tool \"longdesc\" refused: its description is 102400 bytes",
		"tool \"twice\" refused: the server lists it more than once, with different definitions")
	mustContain(t, "add report", addText(AddReport{Servers: []ServerOutcome{out}}), "tool \"deep\" refused")
	if _, err := f.b.SetEnabled(ctxT(t), "h", "", true); err != nil {
		t.Fatal(err)
	}

	specs := f.reg.Specs()
	var sent []llm.ToolSpec
	for _, s := range specs {
		if strings.HasPrefix(s.Name, "mcp_h_") {
			sent = append(sent, s)
		}
	}
	if got := specNames(sent); !slices.Equal(got, []string{"mcp_h_ok", "mcp_h_refloop", "mcp_h_same"}) {
		t.Fatalf("offered %v", got)
	}
	conv := []llm.Message{{Role: "user", Content: "deep enum required propdesc longdesc twice choices nested"}}
	var selected []llm.ToolSpec
	if got := allocated(func() { selected = f.reg.SelectTools(conv, tool.SelectOptions{}) }); got > 4<<20 {
		t.Fatalf("selection allocated %d bytes", got)
	}
	b, _ := json.Marshal(selected)
	if len(b) > 64<<10 {
		t.Fatalf("the selected specs are %d bytes", len(b))
	}
	for _, s := range selected {
		if s.Name != "mcp_h_ok" && s.Name != "mcp_h_refloop" && s.Name != "mcp_h_same" && strings.HasPrefix(s.Name, "mcp_h_") {
			t.Fatalf("selected %s", s.Name)
		}
	}

	rows, err := f.store.Tools("h")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(rows)
	if len(b) > 16<<10 {
		t.Fatalf("the vault keeps %d bytes of this server's tools", len(b))
	}
	pins, err := f.store.Pins("h")
	if err != nil {
		t.Fatal(err)
	}
	if len(pins) != 3 {
		t.Fatalf("pins = %d, want 3", len(pins))
	}

	for _, name := range []string{"deep", "enum", "twice"} {
		res, err := f.reg.Dispatch(ctxT(t), "mcp_h_"+name, nil)
		if err != nil || !res.IsError || strings.Contains(text(res), "ran ") {
			t.Fatalf("%s: %+v, %v", name, res, err)
		}
		mustContain(t, name, text(res), "refused: ", "cannot be granted")
	}
	for _, call := range []struct {
		name string
		args map[string]any
	}{{"ok", map[string]any{"x": "y"}}, {"refloop", map[string]any{"n": 1, "s": map[string]any{"n": 2}}}} {
		res, err := f.reg.Dispatch(ctxT(t), "mcp_h_"+call.name, call.args)
		if err != nil || text(res) != "ran "+call.name {
			t.Fatalf("%s: %+v, %v", call.name, res, err)
		}
	}
	list, err := f.b.Tools(ctxT(t), "h")
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "mcp_tools", toolsText(list), "mcp_h_deep (h/deep) [withheld]\n  refused: its input schema nests")

	// A person cannot grant a refused tool either.
	g := newFixture(t, tool.Interactive, f.path)
	f.b.Close()
	if _, err := g.b.Grant(ctxT(t), "h", "enum"); err == nil || !strings.Contains(err.Error(), "cannot be granted") {
		t.Fatalf("grant of a refused tool: %v", err)
	}
	if qs := g.p.questions(); len(qs) != 0 {
		t.Fatalf("asked %q", qs)
	}
}

// A redefinition no terminal shows (the same letter composed another
// way, an invisible character) is named on the drift screen in ASCII,
// since both lines of the diff look alike.
func TestDriftDiffNamesInvisibleChanges(t *testing.T) {
	tests := []struct{ name, old, new, want string }{
		{name: "composed and decomposed", old: "reads a fil\u00e9", new: "reads a file\u0301", want: `changed at byte 11: "\u00e9" became "e\u0301"`},
		{name: "zero width", old: "reads a file", new: "reads\u200b a file", want: `changed at byte 5: "" became "\u200b"`},
		{name: "cyrillic a", old: "reads a file", new: "reads \u0430 file", want: `changed at byte 6: "a" became "\u0430"`},
		{name: "long", old: strings.Repeat("a", 200), new: strings.Repeat("b", 200), want: `changed at byte 0: "` + strings.Repeat("a", 80) + `"… (120 bytes more) became`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mustContain(t, "diff", driftDiff(tt.old, nil, tt.new, nil), tt.want)
		})
	}
	schema := driftDiff("d", []byte(`{"enum":["caf\u00e9"]}`), "d", []byte(`{"enum":["cafe\u0301"]}`))
	mustContain(t, "schema diff", schema, `became "e\u0301`)
}
