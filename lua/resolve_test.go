package lua

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

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

// resolveWant is what a fixture repository must resolve to: a URL, or a
// command with the package among its arguments, or an error saying so.
type resolveWant struct {
	url, command, pkg string
	env               string // an environment variable the entry sets
	err               string
}

// TestResolveFixtures resolves every repository of the shared fixtures
// through the deterministic pass against the fake contents API and checks
// the entry against what its EXPECTED.txt says.
func TestResolveFixtures(t *testing.T) {
	root := fakeGitHub(t)
	wants := map[string]resolveWant{
		"GLips/Figma-Context-MCP":          {command: "npx", pkg: "figma-developer-mcp"},
		"MarkusPfundstein/mcp-obsidian":    {command: "uvx", pkg: "mcp-obsidian", env: "OBSIDIAN_API_KEY"},
		"atlassian/atlassian-mcp-server":   {url: "https://mcp.atlassian.com/v1/mcp/authv2"},
		"cloudflare/mcp-server-cloudflare": {err: "offers 16 different servers"},
		"getsentry/sentry-mcp":             {url: "https://mcp.sentry.dev/mcp"},
		"github/github-mcp-server":         {url: "https://api.githubcopilot.com/mcp/"},
		"hashicorp/terraform-mcp-server":   {command: "docker", pkg: "hashicorp/terraform-mcp-server"},
		"korotovsky/slack-mcp-server":      {err: "found no server entry"},
		"mendableai/firecrawl-mcp-server":  {command: "npx", pkg: "firecrawl-mcp", env: "FIRECRAWL_API_KEY"},
		"microsoft/playwright-mcp":         {command: "npx", pkg: "@playwright/mcp"},
		"modelcontextprotocol/servers":     {err: "server"},
		"sooperset/mcp-atlassian":          {command: "uvx", pkg: "mcp-atlassian"},
		"stripe/agent-toolkit":             {url: "https://mcp.stripe.com"},
		"upstash/context7":                 {url: "https://mcp.context7.com/mcp"},
	}
	dirs, _ := filepath.Glob(filepath.Join(root, "*__*"))
	if len(dirs) != len(wants) {
		t.Fatalf("%d fixture repositories, %d expectations", len(dirs), len(wants))
	}
	h := newHost(t, Options{Clean: true}, nil)
	for _, dir := range dirs {
		repo := strings.Replace(filepath.Base(dir), "__", "/", 1)
		w, ok := wants[repo]
		if !ok {
			t.Errorf("no expectation for %s", repo)
			continue
		}
		t.Run(repo, func(t *testing.T) {
			expected, err := os.ReadFile(filepath.Join(dir, "EXPECTED.txt"))
			if err != nil {
				t.Fatal(err)
			}
			// the expectation above must be what EXPECTED.txt says
			head := string(expected)
			if i := strings.Index(head, "\nkind:"); i > 0 {
				head = head[:i]
			}
			for _, s := range []string{w.url, w.pkg} {
				if s != "" && !strings.Contains(head, s) {
					t.Fatalf("EXPECTED.txt does not name %q:\n%s", s, head)
				}
			}
			res, err := h.Resolver()(ctxT(t), "https://github.com/"+repo)
			if w.err != "" {
				if err == nil || !strings.Contains(err.Error(), w.err) {
					for _, n := range res.Notes {
						t.Logf("  %s: %s", n.Level, n.Text)
					}
					t.Fatalf("resolved to %+v, %v; want an error saying %q", res.Entry, err, w.err)
				}
				t.Logf("%v", err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			e := res.Entry
			t.Logf("%s %v %s env=%v headers=%v (%s)", e.Command, e.Args, e.URL, e.Env, e.Headers, res.Origin())
			for _, n := range res.Notes {
				t.Logf("  %s: %s", n.Level, n.Text)
			}
			if e.Source != "github:"+repo {
				t.Errorf("source %q", e.Source)
			}
			if res.Pass != "deterministic" || res.File == "" || res.Line < 1 {
				t.Errorf("origin %q", res.Origin())
			}
			switch {
			case w.url != "":
				if e.Transport != "http" || e.URL != w.url {
					t.Errorf("got %s %s %v, want url %s", e.Transport, e.URL, e.Args, w.url)
				}
			default:
				found := false
				for _, a := range e.Args {
					found = found || strings.HasPrefix(a, w.pkg) || strings.HasSuffix(strings.SplitN(a, ":", 2)[0], w.pkg)
				}
				if e.Command != w.command || !found {
					t.Errorf("got %s %v, want %s running %s", e.Command, e.Args, w.command, w.pkg)
				}
				if w.env != "" && e.Env[w.env] != "${"+w.env+"}" {
					t.Errorf("env %v: want %s as a ${%s} reference", e.Env, w.env, w.env)
				}
			}
		})
	}
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
