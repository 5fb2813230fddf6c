package lua

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailscale/hujson"

	"tai/engine/sandbox"
	"tai/mcp"
	"tai/mcp/config"
)

var (
	update     = flag.Bool("update", false, "rewrite the output part of testdata/normalize/*.golden")
	importDir  = flag.String("import", "", "create testdata/normalize/*.golden from the configs in this folder")
	goldenDir  = filepath.Join("testdata", "normalize")
	goldenMark = "\n-- normalized (GOOS=linux) --\n"
)

// golden is one testdata/normalize file: the pasted text as it appears in
// the fixtures, then what Normalize made of it.
type goldenOut struct {
	Entries []mcp.Entry   `json:"entries"`
	Notes   []config.Note `json:"notes"`
	Error   string        `json:"error,omitempty"`
}

func normalizeForGolden(rules config.Rules, text string) []byte {
	var denied []config.Denied
	for _, p := range sandbox.DefaultDeny() {
		denied = append(denied, config.Denied{Path: p, Why: config.DenyListed})
	}
	entries, notes, err := config.Normalize(text, &config.Options{GOOS: "linux", Rules: rules, Denied: denied, Hints: configHints})
	out := goldenOut{Entries: entries, Notes: notes}
	if out.Entries == nil {
		out.Entries = []mcp.Entry{}
	}
	if out.Notes == nil {
		out.Notes = []config.Note{}
	}
	if err != nil {
		out.Error = err.Error()
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	enc.Encode(out)
	return b.Bytes()
}

// TestNormalizeGolden normalizes every pasted config of
// testdata/normalize (copies of the fixtures, traced in their SOURCES.md)
// with the shipped rules and compares with the recorded result.
func TestNormalizeGolden(t *testing.T) {
	h := newHost(t, Options{Clean: true}, nil)
	rules := h.NormalizeRules()
	if *importDir != "" {
		files, err := filepath.Glob(filepath.Join(*importDir, "*"))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(goldenDir, 0o755)
		for _, f := range files {
			if strings.HasSuffix(f, ".md") {
				continue
			}
			in, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			name := filepath.Base(f) + ".golden"
			data := append(append(append([]byte{}, in...), goldenMark...), normalizeForGolden(rules, string(in))...)
			if err := os.WriteFile(filepath.Join(goldenDir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	files, err := filepath.Glob(filepath.Join(goldenDir, "*.golden"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files in %s (%v)", goldenDir, err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".golden"), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			i := bytes.LastIndex(data, []byte(goldenMark))
			if i < 0 {
				t.Fatalf("%s has no %q line", f, strings.TrimSpace(goldenMark))
			}
			in, want := data[:i], data[i+len(goldenMark):]
			got := normalizeForGolden(rules, string(in))
			if *update {
				if !bytes.Equal(got, want) {
					os.WriteFile(f, append(append(in, goldenMark...), got...), 0o644)
				}
				return
			}
			if !bytes.Equal(got, want) {
				t.Errorf("normalized differently from %s (run go test -run TestNormalizeGolden -update and review the diff):\n%s", f, got)
			}
		})
	}
}

// goldenInputs returns the pasted texts of testdata/normalize.
func goldenInputs(tb testing.TB) map[string]string {
	files, err := filepath.Glob(filepath.Join(goldenDir, "*.golden"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no golden files (%v)", err)
	}
	out := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		if i := bytes.LastIndex(data, []byte(goldenMark)); i >= 0 {
			out[filepath.Base(f)] = string(data[:i])
		}
	}
	return out
}

// BenchmarkNormalizeLargest normalizes the largest fixture with the Lua
// rules (their state is built once and reused, as in a running tai),
// beside Parse alone and beside the floor of the libraries alone (hujson
// to standard JSON, then encoding/json into maps).
func BenchmarkNormalizeLargest(b *testing.B) {
	inputs := goldenInputs(b)
	var name, text string
	for n, in := range inputs {
		if len(in) > len(text) {
			name, text = n, in
		}
	}
	h := newHost(b, Options{Clean: true}, nil)
	rules := h.NormalizeRules()
	if _, _, err := config.Normalize(text, &config.Options{GOOS: "linux", Rules: rules}); err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	b.Run("lua-rules/"+name, func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			config.Normalize(text, &config.Options{GOOS: "linux", Rules: rules})
		}
	})
	b.Run("parse-only/"+name, func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			config.Parse(text)
		}
	})
	// The floor: what reading the same JSONC into Go maps costs with the
	// libraries alone (hujson to standard JSON, then encoding/json).
	b.Run("hujson+encoding-json/"+name, func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			std, err := hujson.Standardize([]byte(text))
			if err != nil {
				b.Fatal(err)
			}
			var v any
			if err := json.Unmarshal(std, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// FuzzNormalize runs the whole parse → Lua rules → validate path on
// arbitrary text: it must never panic, and whatever it accepts must be a
// usable entry under a unique, valid name.
func FuzzNormalize(f *testing.F) {
	for _, in := range goldenInputs(f) {
		f.Add(in)
	}
	for _, s := range []string{`"a": [`, "[mcp_servers.x]\ncommand = 'a b'", `{"command": "a 'b"}`, "{ ... }", `${`, "```\n{}\n```"} {
		f.Add(s)
	}
	h := newHost(f, Options{Clean: true}, nil)
	rules := h.NormalizeRules()
	f.Fuzz(func(t *testing.T, text string) {
		for _, goos := range []string{"linux", "windows"} {
			entries, notes, err := config.Normalize(text, &config.Options{GOOS: goos, Rules: rules, Hints: configHints})
			if err != nil {
				if entries != nil {
					t.Fatalf("entries with an error: %v", err)
				}
				continue
			}
			seen := map[string]bool{}
			for _, e := range entries {
				if !config.ValidName(e.Name) || seen[e.Name] {
					t.Fatalf("bad or repeated name %q", e.Name)
				}
				seen[e.Name] = true
				probe, _ := config.Expand(e, func(string) (string, bool) { return "x", true })
				if probe.Transport == mcp.TransportHTTP && strings.HasPrefix(e.URL, "${") {
					continue
				}
				if err := probe.Validate(); err != nil && !strings.Contains(e.URL, "${") {
					t.Fatalf("accepted an entry that does not validate: %v (%+v)", err, e)
				}
			}
			for _, n := range notes {
				switch n.Level {
				case config.LevelInfo, config.LevelWarn, config.LevelRefused:
				default:
					t.Fatalf("note level %q", n.Level)
				}
				if n.Level == config.LevelRefused && seen[n.Server] {
					t.Fatalf("%q both refused and accepted", n.Server)
				}
			}
		}
	})
}
