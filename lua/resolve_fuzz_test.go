package lua

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tai/mcp/github"
	"tai/mcp/github/githubtest"
)

// FuzzResolvePass feeds random READMEs and server.json documents to the
// deterministic pass: it never fails with a Lua error (an internal error
// reaches the person as one line, which this fuzzer treats as a bug), and
// it ends well inside its deadline. The seeds are every fixture's and
// hand-made repository's README and server.json.
func FuzzResolvePass(f *testing.F) {
	// the shared fixtures seed it where they are (beside the module);
	// the hand-made repositories always
	seeds := []string{
		filepath.Join("..", "..", "shared", "fixtures", "repos"),
		filepath.Join("..", "..", "shared", "fixtures", "repos2"),
		filepath.Join("testdata", "repos"),
	}
	for _, root := range seeds {
		dirs, _ := filepath.Glob(filepath.Join(root, "*__*"))
		for _, d := range dirs {
			readme, _ := os.ReadFile(filepath.Join(d, "README.md"))
			sj, _ := os.ReadFile(filepath.Join(d, "server.json"))
			// seeds of a few KB keep each run short, so the fuzzer
			// mutates much; BenchmarkResolvePass times whole READMEs
			f.Add(head(string(readme), 6<<10), head(string(sj), 6<<10))
		}
	}
	f.Add("```json\n{\"mcpServers\": {\"x\": {\"command\": \"npx\", \"args\": null}}}\n```", `{"packages": null, "remotes": [null]}`)
	f.Add("<pre>\nnpx -y a # b | c\n</pre>\n<details>\n```\nuvx \"\n```", `{"version": "0.0.0", "packages": [{"registryType": "npm", "identifier": "a", "version": "$VERSION"}]}`)
	dir := f.TempDir()
	repo := filepath.Join(dir, "fuzz__repo")
	if err := os.Mkdir(repo, 0o755); err != nil {
		f.Fatal(err)
	}
	srv := httptest.NewServer(githubtest.Handler(dir, nil))
	f.Cleanup(srv.Close)
	client, err := github.New(github.Options{Base: srv.URL})
	if err != nil {
		f.Fatal(err)
	}
	src, err := github.Parse("github.com/fuzz/repo")
	if err != nil {
		f.Fatal(err)
	}
	h := newHost(f, Options{Clean: true}, nil)
	h.Resolver()
	r := h.modules.resolve
	f.Fuzz(func(t *testing.T, readme, serverJSON string) {
		for name, text := range map[string]string{"README.md": readme, "server.json": serverJSON} {
			p := filepath.Join(repo, name)
			if text == "" {
				_ = os.Remove(p)
			} else if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		res, why, err := r.deterministic(ctx, client, src, "main")
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Fatalf("the pass did not end within 20 s")
		}
		if err != nil {
			if strings.Contains(err.Error(), "internal error") || strings.Contains(err.Error(), "stack traceback") {
				t.Fatalf("a Lua error: %v", err)
			}
			return
		}
		if res != nil {
			if err := res.Entry.Validate(); err != nil {
				t.Fatalf("an entry that does not validate: %v", err)
			}
			if len(res.Notes) > 5 {
				t.Fatalf("%d notes", len(res.Notes))
			}
		} else if len(why.notes) > 5 {
			t.Fatalf("%d notes", len(why.notes))
		}
	})
}

// head is s cut to at most n bytes.
func head(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
