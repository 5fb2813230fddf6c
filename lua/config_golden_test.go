package lua

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	entries, notes, err := config.Normalize(text, &config.Options{GOOS: "linux", Rules: rules})
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
