package lua

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tai/mcp/github"
	"tai/mcp/github/githubtest"
)

// BenchmarkResolvePass times the deterministic pass over a README of
// about 100 KB: a real one (fastmcp's, 2700 lines of prose and blocks)
// beside hostile ones of the same size (one line of spaces, brackets,
// recommending sentences, headings each over a block: the shapes a
// backtracking pattern or a per-candidate scan pays for quadratically),
// so a README's cost is seen to follow its size, not its shape.
func BenchmarkResolvePass(b *testing.B) {
	real, err := os.ReadFile(filepath.Join(githubtest.Fixtures(b, "repos2")[0], "punkpeye__fastmcp", "README.md"))
	if err != nil {
		b.Fatal(err)
	}
	n := len(real)
	for _, c := range []struct{ name, readme string }{
		{"real", string(real)},
		{"one-line-of-spaces", "x" + strings.Repeat(" ", n) + "x"},
		{"brackets", strings.Repeat("[a](", n/4)},
		{"recommend-sentences", strings.Repeat("we recommend mcp.example.dev ", n/29)},
		{"headings-and-blocks", strings.Repeat("## Install (recommended)\n```\nnpx -y @a/b-mcp\n```\n", n/44)},
	} {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			repo := filepath.Join(dir, "bench__repo")
			if err := os.Mkdir(repo, 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(repo, "README.md"), []byte(c.readme), 0o644); err != nil {
				b.Fatal(err)
			}
			srv := httptest.NewServer(githubtest.Handler(dir, nil))
			b.Cleanup(srv.Close)
			client, err := github.New(github.Options{Base: srv.URL})
			if err != nil {
				b.Fatal(err)
			}
			src, _ := github.Parse("github.com/bench/repo")
			h := newHost(b, Options{Clean: true}, nil)
			h.Resolver()
			r := h.modules.resolve
			b.SetBytes(int64(len(c.readme)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, _, err := r.deterministic(context.Background(), client, src, "main"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
