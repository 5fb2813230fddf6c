package github

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tai/mcp/config"
	"tai/mcp/github/githubtest"
)

var update = flag.Bool("update", false, "rewrite the server.json golden files")

// TestServerJSONGolden maps every server.json of the repository fixtures
// and the hand-made ones in testdata/serverjson, and compares what each
// became (candidates and notes, or the error) with its .golden file.
func TestServerJSONGolden(t *testing.T) {
	root := githubtest.Fixtures(t, "repos")[0]
	real, _ := filepath.Glob(filepath.Join(root, "*", "server.json"))
	made, _ := filepath.Glob(filepath.Join("testdata", "serverjson", "*.json"))
	if len(real) < 6 || len(made) < 4 {
		t.Fatalf("found %d real and %d hand-made server.json files", len(real), len(made))
	}
	for _, p := range append(real, made...) {
		name := filepath.Base(p)
		if name == "server.json" {
			name = filepath.Base(filepath.Dir(p)) + ".json"
		}
		t.Run(name, func(t *testing.T) {
			text, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			cands, notes, err := ServerJSON(string(text))
			got := map[string]any{"candidates": cands, "notes": notes}
			if err != nil {
				got = map[string]any{"error": err.Error()}
			}
			b, _ := json.MarshalIndent(got, "", "  ")
			b = append(b, '\n')
			golden := filepath.Join("testdata", "serverjson", strings.TrimSuffix(name, ".json")+".golden")
			if *update {
				if err := os.WriteFile(golden, b, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./mcp/github -run Golden -update, then read the diff)", err)
			}
			if !bytes.Equal(want, b) {
				t.Errorf("%s differs from %s:\n%s", name, golden, b)
			}
			for _, c := range cands {
				e, _ := config.Expand(c.Entry, func(string) (string, bool) { return "x", true })
				if err := e.Validate(); err != nil {
					t.Errorf("candidate %s does not validate: %v", c.From, err)
				}
			}
		})
	}
}

func TestServerJSONSchemas(t *testing.T) {
	for _, c := range []struct{ name, text, wantArgs string }{
		{"snake", `{"$schema":"https://static.modelcontextprotocol.io/schemas/2025-07-09/server.schema.json","name":"a/b","packages":[{"registry_type":"npm","identifier":"b","version":"1.0.0","package_arguments":[{"type":"positional","value":"--x"}]}]}`, "-y b@1.0.0 --x"},
		{"camel", `{"$schema":"https://static.modelcontextprotocol.io/schemas/2025-10-17/server.schema.json","name":"a/b","packages":[{"registryType":"npm","identifier":"b","version":"1.0.0","packageArguments":[{"type":"positional","value":"--x"}]}]}`, "-y b@1.0.0 --x"},
		{"camel keys ignored in a snake schema are still read", `{"$schema":"https://static.modelcontextprotocol.io/schemas/2025-07-09/server.schema.json","name":"a/b","packages":[{"registryType":"pypi","identifier":"b"}]}`, "b"},
		{"registry_name and name before 2025-07-09", `{"$schema":"https://static.modelcontextprotocol.io/schemas/2025-05-16/server.schema.json","name":"a/b","packages":[{"registry_name":"npm","name":"b","version":"2"}]}`, "-y b@2"},
	} {
		cands, _, err := ServerJSON(c.text)
		if err != nil || len(cands) != 1 {
			t.Errorf("%s: %v %v", c.name, cands, err)
			continue
		}
		if got := strings.Join(cands[0].Entry.Args, " "); got != c.wantArgs {
			t.Errorf("%s: args %q, want %q", c.name, got, c.wantArgs)
		}
	}
	for _, bad := range []string{`[]`, `{"name": 3}`, `not json`, `{"packages": {"a": 1}}`} {
		if _, _, err := ServerJSON(bad); err == nil {
			t.Errorf("ServerJSON(%s) = no error", bad)
		}
	}
	_, notes, _ := ServerJSON(`{"name":"a/b","remotes":[{"type":"sse","url":"https://x/sse"}]}`)
	if len(notes) == 0 || notes[len(notes)-1].Level != config.LevelRefused {
		t.Errorf("an sse remote is not refused: %v", notes)
	}
}
