package lua

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tai/mcp"
	"tai/mcp/github"
	"tai/mcp/github/githubtest"
)

// fakeGitHub serves the repository fixtures as the contents API and points
// TAI_GITHUB_API at it.
func fakeGitHub(t *testing.T) string {
	t.Helper()
	root, err := githubtest.Repos()
	if err != nil {
		t.Fatalf("the repository fixtures (../shared/fixtures/repos beside the module) are missing: %v", err)
	}
	srv := httptest.NewServer(githubtest.Handler(root, nil))
	t.Cleanup(srv.Close)
	t.Setenv("TAI_GITHUB_API", srv.URL)
	t.Setenv("GITHUB_TOKEN", "")
	return root
}

// way is one acceptable entry for a fixture: a URL (compared without a
// trailing slash), or a command whose line holds each of has; env names
// variables the entry must read as ${NAME} references.
type way struct {
	url     string
	command string
	has     []string
	env     []string
}

// fixtureWant is what a careful reader of a fixture's EXPECTED.txt
// accepts: any one of ways, or a refusal holding each of refuse; the
// entry's line must hold none of not.
type fixtureWant struct {
	ways   []way
	refuse []string
	not    []string
}

// fixtureWants are derived from each fixture's EXPECTED.txt ("expected",
// "also", "alternatives" and its traps); the test checks that every URL
// and package named here appears in that file.
var fixtureWants = map[string]fixtureWant{
	"GLips/Figma-Context-MCP":          {ways: []way{{command: "npx", has: []string{"figma-developer-mcp"}}}},
	"MarkusPfundstein/mcp-obsidian":    {ways: []way{{command: "uvx", has: []string{"mcp-obsidian"}, env: []string{"OBSIDIAN_API_KEY"}}}},
	"atlassian/atlassian-mcp-server":   {ways: []way{{url: "https://mcp.atlassian.com/v1/mcp/authv2"}}},
	"cloudflare/mcp-server-cloudflare": {refuse: []string{"servers", "github.com/cloudflare/mcp-server-cloudflare"}},
	"getsentry/sentry-mcp":             {ways: []way{{url: "https://mcp.sentry.dev/mcp"}, {command: "npx", has: []string{"@sentry/mcp-server"}}}},
	"github/github-mcp-server":         {ways: []way{{url: "https://api.githubcopilot.com/mcp/"}, {command: "docker", has: []string{"ghcr.io/github/github-mcp-server"}}}},
	"hashicorp/terraform-mcp-server":   {ways: []way{{command: "docker", has: []string{"hashicorp/terraform-mcp-server"}}}},
	"korotovsky/slack-mcp-server":      {refuse: []string{"no config block or run line", "docs"}},
	"mendableai/firecrawl-mcp-server":  {ways: []way{{command: "npx", has: []string{"firecrawl-mcp"}, env: []string{"FIRECRAWL_API_KEY"}}}},
	"microsoft/playwright-mcp":         {ways: []way{{command: "npx", has: []string{"@playwright/mcp"}}}},
	"modelcontextprotocol/servers":     {refuse: []string{"servers", "tree/main/src/memory", "tree/main/src/git"}},
	"sooperset/mcp-atlassian":          {ways: []way{{command: "uvx", has: []string{"mcp-atlassian"}}}},
	"stripe/agent-toolkit":             {ways: []way{{url: "https://mcp.stripe.com"}, {command: "npx", has: []string{"@stripe/mcp"}}}},
	"upstash/context7":                 {ways: []way{{url: "https://mcp.context7.com/mcp"}, {command: "npx", has: []string{"@upstash/context7-mcp"}}}},

	"Flux159/mcp-server-kubernetes": {ways: []way{{command: "npx", has: []string{"mcp-server-kubernetes"}}}, not: []string{"2.9.4", "mcp-chat"}},
	"PostHog/mcp":                   {ways: []way{{url: "https://mcp.posthog.com/mcp"}}},
	"ahujasid/blender-mcp":          {ways: []way{{command: "uvx", has: []string{"blender-mcp"}}}},
	"alexei-led/k8s-mcp-server":     {ways: []way{{command: "docker", has: []string{"ghcr.io/alexei-led/k8s-mcp-server"}}}, not: []string{"8000:8000", "streamable-http"}},
	"apify/apify-mcp-server":        {ways: []way{{url: "https://mcp.apify.com"}, {command: "npx", has: []string{"@apify/actors-mcp-server"}, env: []string{"APIFY_TOKEN"}}}, not: []string{"/sse", "localhost"}},
	"dbt-labs/dbt-mcp":              {ways: []way{{command: "uvx", has: []string{"dbt-mcp"}}}},
	"executeautomation/mcp-playwright": {ways: []way{{command: "npx", has: []string{"@executeautomation/playwright-mcp-server"}}},
		not: []string{"--port", "localhost"}},
	"firebase/firebase-tools": {ways: []way{{command: "npx", has: []string{"firebase-tools", " mcp"}}}},
	"hloiseau/mcp-gopls":      {ways: []way{{command: "go", has: []string{"run github.com/hloiseau/mcp-gopls/v2/cmd/mcp-gopls@"}}}},
	"huggingface/hf-mcp-server": {ways: []way{{url: "https://huggingface.co/mcp?login"}, {url: "https://huggingface.co/mcp"}, {command: "npx", has: []string{"@llmindset/hf-mcp-server"}}},
		not: []string{"hf-mcp-server-http", "3000:3000"}},
	"jsdelivr/globalping-mcp-server": {ways: []way{{url: "https://mcp.globalping.dev/mcp"}}},
	"mark3labs/mcp-go":               {refuse: []string{"framework"}},
	"microsoft/mcp":                  {refuse: []string{"servers", "tree/main/servers/Azure.Mcp.Server", "tree/main/servers/Fabric.Mcp.Server"}},
	"mrjoshuak/godoc-mcp": {ways: []way{{command: "go", has: []string{"run github.com/mrjoshuak/godoc-mcp@"}}, {command: "docker", has: []string{"ghcr.io/mrjoshuak/godoc-mcp"}}},
		not: []string{"--transport", "8080"}},
	"punkpeye/fastmcp": {refuse: []string{"framework"}},
	"semgrep/mcp":      {ways: []way{{command: "uvx", has: []string{"semgrep-mcp"}}, {command: "docker", has: []string{"ghcr.io/semgrep/mcp", "-t stdio"}}}, not: []string{"#", "--help"}},
}

// fakeGoPath puts a program named go (and nothing else) on PATH, so the
// pass sees a Go toolchain and no vendor CLI, whatever the machine has.
func fakeGoPath(t *testing.T, names ...string) {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir)
}

// TestResolveFixtures resolves every repository of the shared fixtures
// (repos and repos2) through the deterministic pass against the fake
// contents API, judges each answer by fixtureWants, and prints the count
// acceptable, the count refused for the right reason and the Lua errors.
func TestResolveFixtures(t *testing.T) {
	roots, err := githubtest.AllRepos()
	if err != nil {
		t.Fatalf("the repository fixtures (../shared/fixtures/repos and repos2 beside the module) are missing: %v", err)
	}
	srv := httptest.NewServer(githubtest.HandlerOf(roots, nil))
	t.Cleanup(srv.Close)
	t.Setenv("TAI_GITHUB_API", srv.URL)
	t.Setenv("GITHUB_TOKEN", "")
	fakeGoPath(t, "go")
	var dirs []string
	for _, root := range roots {
		d, _ := filepath.Glob(filepath.Join(root, "*__*"))
		dirs = append(dirs, d...)
	}
	if len(dirs) != len(fixtureWants) {
		t.Fatalf("%d fixture repositories, %d expectations", len(dirs), len(fixtureWants))
	}
	h := newHost(t, Options{Clean: true}, nil)
	var entries, refused, luaErrors int
	for _, dir := range dirs {
		repo := strings.Replace(filepath.Base(dir), "__", "/", 1)
		w, ok := fixtureWants[repo]
		if !ok {
			t.Errorf("no expectation for %s", repo)
			continue
		}
		t.Run(repo, func(t *testing.T) {
			expected, err := os.ReadFile(filepath.Join(dir, "EXPECTED.txt"))
			if err != nil {
				t.Fatal(err)
			}
			for _, wy := range w.ways {
				for _, s := range append([]string{wy.url}, wy.has...) {
					s = strings.TrimPrefix(strings.TrimSuffix(strings.TrimPrefix(s, "run "), "@"), " ")
					if s != "" && !strings.Contains(string(expected), s) {
						t.Fatalf("EXPECTED.txt does not name %q", s)
					}
				}
			}
			res, err := h.Resolver()(ctxT(t), "https://github.com/"+repo)
			if err != nil && (strings.Contains(err.Error(), "stack traceback") || strings.Contains(err.Error(), ".lua:")) {
				luaErrors++
				t.Fatalf("a Lua error reached the person: %v", err)
			}
			if len(w.refuse) > 0 {
				if err == nil {
					t.Fatalf("resolved to %s; want a refusal saying %q", describeEntry(res), w.refuse)
				}
				for _, s := range w.refuse {
					if !strings.Contains(err.Error(), s) {
						t.Fatalf("refused with %q; want it to say %q", err, s)
					}
				}
				t.Logf("%v", err)
				refused++
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := describeEntry(res)
			t.Logf("%s (%s)", got, res.Origin())
			for _, n := range res.Notes {
				t.Logf("  %s: %s", n.Level, n.Text)
			}
			if res.Entry.Source != "github:"+repo || res.Pass != "deterministic" || res.File == "" || res.Line < 1 {
				t.Errorf("source %q, origin %q", res.Entry.Source, res.Origin())
			}
			if len(res.Notes) > 5 {
				t.Errorf("%d notes; at most five", len(res.Notes))
			}
			for _, s := range w.not {
				if strings.Contains(got, s) {
					t.Errorf("%s holds %q", got, s)
				}
			}
			for _, wy := range w.ways {
				if wy.accepts(res.Entry) {
					entries++
					return
				}
			}
			t.Errorf("%s is none of the acceptable ways %+v", got, w.ways)
		})
	}
	t.Logf("%d fixtures: %d acceptable entries, %d refused for the right reason, %d Lua errors", len(dirs), entries, refused, luaErrors)
	if entries+refused != len(dirs) || luaErrors != 0 {
		t.Errorf("%d of %d fixtures resolved acceptably", entries+refused, len(dirs))
	}
}

// accepts says whether e is this way.
func (w way) accepts(e mcp.Entry) bool {
	if w.url != "" {
		return e.Transport == "http" && strings.TrimSuffix(e.URL, "/") == strings.TrimSuffix(w.url, "/")
	}
	line := e.Command + " " + strings.Join(e.Args, " ")
	if e.Command != w.command {
		return false
	}
	for _, s := range w.has {
		if !strings.Contains(line, s) {
			return false
		}
	}
	for _, n := range w.env {
		if e.Env[n] != "${"+n+"}" {
			return false
		}
	}
	return true
}

// describeEntry is an entry on one line.
func describeEntry(res github.Resolution) string {
	e := res.Entry
	if e.URL != "" {
		return fmt.Sprintf("%s headers=%v", e.URL, e.Headers)
	}
	return fmt.Sprintf("%s %s env=%v", e.Command, strings.Join(e.Args, " "), e.Env)
}

// TestResolveHandMade resolves the hand-made repositories of
// testdata/repos: layouts the fixtures do not have, and hostile ones.
func TestResolveHandMade(t *testing.T) {
	srv := httptest.NewServer(githubtest.Handler(filepath.Join("testdata", "repos"), nil))
	t.Cleanup(srv.Close)
	t.Setenv("TAI_GITHUB_API", srv.URL)
	t.Setenv("GITHUB_TOKEN", "")
	h := newHost(t, Options{Clean: true}, nil)
	for _, c := range []struct {
		repo, want, env, err string
	}{
		{repo: "acme/dock", want: "docker run -i --rm -e DOCK_API_KEY acme/dock-mcp:1.0", env: "DOCK_API_KEY"},
		{repo: "acme/py", want: "uvx mcp-server-foo --root /data"},
		{repo: "evil/hostile", err: `needs a shell (it uses the shell operator ";")`},
		{repo: "evil/hint", err: "runs sh, not a runner"},
	} {
		res, err := h.Resolver()(ctxT(t), "github.com/"+c.repo)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: resolved %+v, %v; want an error saying %q", c.repo, res.Entry, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.repo, err)
			continue
		}
		if got := strings.Join(append([]string{res.Entry.Command}, res.Entry.Args...), " "); got != c.want {
			t.Errorf("%s: %s, want %s", c.repo, got, c.want)
		}
		if c.env != "" && res.Entry.Env[c.env] != "${"+c.env+"}" {
			t.Errorf("%s: env %v", c.repo, res.Entry.Env)
		}
	}
}
