package lua

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tai/engine/tool"
	"tai/mcp"
	"tai/mcp/github"
	"tai/mcp/github/githubtest"
)

// fakeGitHub serves the repository fixtures as the contents API and points
// TAI_GITHUB_API at it.
func fakeGitHub(t *testing.T) string {
	t.Helper()
	root := githubtest.Fixtures(t, "repos")[0]
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
	headers []string // headers the entry must set
}

// fixtureWant is what a careful reader of a fixture's EXPECTED.txt
// accepts: any one of ways, or a refusal holding each of refuse; the
// entry's line must hold none of not.
type fixtureWant struct {
	ways   []way
	refuse []string
	not    []string
	notes  []string // what the notes must say
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
	"PostHog/mcp":                   {ways: []way{{url: "https://mcp.posthog.com/mcp", headers: []string{"Authorization"}}}},
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
	"jsdelivr/globalping-mcp-server": {ways: []way{{url: "https://mcp.globalping.dev/mcp"}}, notes: []string{"server.json names https://mcp.globalping.io/mcp, the README https://mcp.globalping.dev/mcp"}},
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
	roots := githubtest.Fixtures(t, "repos", "repos2")
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
			for _, s := range w.notes {
				found := false
				for _, n := range res.Notes {
					found = found || strings.Contains(n.Text, s)
				}
				if !found {
					t.Errorf("no note says %q", s)
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
		for _, h := range w.headers {
			if e.Headers[h] == "" {
				return false
			}
		}
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
// testdata/repos: one small case per class of layout (several servers, a
// framework, a Go program, pyproject only, a vendor CLI, HTML blocks,
// template versions, quoting, local-only modes, a scoped recommendation,
// JSON nulls) and hostile ones. on names the programs on PATH.
func TestResolveHandMade(t *testing.T) {
	srv := httptest.NewServer(githubtest.Handler(filepath.Join("testdata", "repos"), nil))
	t.Cleanup(srv.Close)
	t.Setenv("TAI_GITHUB_API", srv.URL)
	t.Setenv("GITHUB_TOKEN", "")
	for _, c := range []struct {
		repo      string
		on        []string
		want, url string
		env       []string
		note, err string
	}{
		{repo: "acme/dock", want: "docker run -i --rm -e DOCK_API_KEY acme/dock-mcp:1.0", env: []string{"DOCK_API_KEY"}},
		{repo: "acme/py", want: "uvx mcp-server-foo --root /data"},
		{repo: "evil/hostile", err: `needs a shell (it uses the shell operator ";")`},
		{repo: "evil/hint", err: "runs sh, not a runner"},
		{repo: "acme/many", err: "offers 3 servers, not one"},
		{repo: "acme/upstream", want: "npx -y @acme/upstream-mcp --host https://grafana.acme.dev"},
		{repo: "acme/pgport", want: "npx -y @acme/pg-mcp --host db.acme.dev --port 5432"},
		{repo: "acme/dlx", want: "npx -y @acme/dlx-mcp --stdio"},
		{repo: "acme/suite", err: "offers 2 servers, not one (its README links to each one's folder): add one of them by its URL\n  1. alpha  github.com/acme/suite/tree/main/servers/alpha\n  2. beta  github.com/acme/suite/tree/main/servers/beta"},
		{repo: "acme/frame", err: "a framework for writing servers, not a server"},
		{repo: "acme/builtwith", want: "uvx acme-weather-mcp"},
		{repo: "acme/globalnpm", want: "npx -y @acme/globalnpm-mcp --stdio"},
		{repo: "acme/envrec", url: "https://mcp.envrec.dev/mcp"},
		{repo: "acme/pytmpl", want: "uvx acme-pytmpl-mcp", note: "a template nobody filled in"},
		{repo: "acme/gobin", on: []string{"go"}, want: "go run github.com/acme/gobin/v2/cmd/gobin-mcp@v1.2.0 --root /data"},
		{repo: "acme/gobin", err: "a Go program with no published package: install it (go install github.com/acme/gobin/v2/cmd/gobin-mcp@v1.2.0), then add gobin-mcp --root /data"},
		{repo: "acme/pyonly", want: "uvx --from acme-tools acme-tools-mcp"},
		{repo: "acme/vendor", on: []string{"acme"}, want: "acme mcp:start"},
		{repo: "acme/vendor", err: "no acme is on PATH: install the acme CLI, then add again"},
		{repo: "acme/html", want: "npx -y @acme/html-mcp", env: []string{"HTML_KEY", "MEMORY_FILE_PATH"}, note: "needs ${HTML_KEY}, ${MEMORY_FILE_PATH} when it starts"},
		{repo: "acme/tmpl", want: "npx -y @acme/tmpl-mcp@latest", note: "the version 0.0.0, a template nobody filled in: the newest release runs"},
		{repo: "acme/quotes", want: "uvx acme-redis-mcp --url redis://cache.acme.dev:6379"},
		{repo: "acme/localonly", err: "the README only shows local modes"},
		{repo: "acme/recs", url: "https://mcp.recs.dev/mcp"},
		{repo: "acme/nulls", want: "npx -y @acme/nulls-mcp", env: []string{"NULLS_TOKEN"}},
		{repo: "acme/npmbin", want: "npx -y @acme/npmbin-server --readonly", env: []string{"NPMBIN_TOKEN"}},
	} {
		t.Run(c.repo+strings.Join(c.on, "+"), func(t *testing.T) {
			fakeGoPath(t, c.on...)
			h := newHost(t, Options{Clean: true}, nil)
			res, err := h.Resolver()(ctxT(t), "github.com/"+c.repo)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("resolved %s, %v; want an error saying %q", describeEntry(res), err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.url != "" {
				if res.Entry.URL != c.url {
					t.Fatalf("%s, want %s", describeEntry(res), c.url)
				}
			} else if got := strings.Join(append([]string{res.Entry.Command}, res.Entry.Args...), " "); got != c.want {
				t.Fatalf("%s, want %s", got, c.want)
			}
			for _, n := range c.env {
				if res.Entry.Env[n] != "${"+n+"}" {
					t.Errorf("env %v: want %s as ${%s}", res.Entry.Env, n, n)
				}
			}
			if c.note != "" {
				var all []string
				for _, n := range res.Notes {
					all = append(all, n.Text)
				}
				if !strings.Contains(strings.Join(all, "\n"), c.note) {
					t.Errorf("notes %q do not say %q", all, c.note)
				}
			}
		})
	}
}

// TestResolveIsolatesFailures: a README block whose reading fails is a
// note naming the file and line, and the other blocks still give the
// entry; a failure outside any block is one line asking to report it,
// never a Lua stack; and with the API unreachable the error says what to
// do next.
func TestResolveIsolatesFailures(t *testing.T) {
	srv := httptest.NewServer(githubtest.Handler(filepath.Join("testdata", "repos"), nil))
	t.Cleanup(srv.Close)
	t.Setenv("TAI_GITHUB_API", srv.URL)
	t.Setenv("GITHUB_TOKEN", "")
	fakeGoPath(t)
	h := newHost(t, Options{}, map[string]string{"lua/resolve.lua": `
		local base = require("builtin.resolve")
		local M = setmetatable({}, { __index = base })
		local n = 0
		function M:block(body, lang, ctx, file, first, lines)
			n = n + 1
			if n == 1 then error("this block breaks the reader") end
			return base.block(self, body, lang, ctx, file, first, lines)
		end
		return M`})
	res, err := h.Resolver()(ctxT(t), "github.com/acme/nulls")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(append([]string{res.Entry.Command}, res.Entry.Args...), " "); got != "npx -y @acme/nulls-mcp" {
		t.Fatalf("got %s", got)
	}
	found := false
	for _, n := range res.Notes {
		found = found || strings.Contains(n.Text, "README.md line 3 could not be read (this block breaks the reader): skipped")
	}
	if !found {
		t.Errorf("no note names the block that failed: %+v", res.Notes)
	}

	broken := newHost(t, Options{}, map[string]string{"lua/resolve.lua": `
		local base = require("builtin.resolve")
		local M = setmetatable({}, { __index = base })
		function M:choose(ctx) local t = nil; return t.x end
		return M`})
	_, err = broken.Resolver()(ctxT(t), "github.com/acme/nulls")
	if err == nil || !strings.Contains(err.Error(), "an internal error") || !strings.Contains(err.Error(), "please report this") ||
		strings.Contains(err.Error(), "stack traceback") || strings.Count(err.Error(), "\n") != 1 {
		t.Fatalf("internal failure reads %q; want one line and a request to report it", err)
	}

	down := httptest.NewServer(nil)
	down.Close()
	t.Setenv("TAI_GITHUB_API", down.URL)
	offline := newHost(t, Options{Clean: true}, nil)
	_, err = offline.Resolver()(ctxT(t), "github.com/acme/nulls")
	for _, w := range []string{"did not answer", "check the network", "TAI_GITHUB_API", "paste the config block"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("offline error %v does not say %q", err, w)
		}
	}
}

// TestResolveSeveralFromLua: from Lua, a repository of several servers
// is an error holding the list, and tai.mcp.resolve's third value lists
// them with the URL that resolves each; mcp_add's error holds the list.
func TestResolveSeveralFromLua(t *testing.T) {
	srv := httptest.NewServer(githubtest.Handler(filepath.Join("testdata", "repos"), nil))
	t.Cleanup(srv.Close)
	t.Setenv("TAI_GITHUB_API", srv.URL)
	t.Setenv("GITHUB_TOKEN", "")
	h := newHost(t, Options{Vault: openTestVault(t, "pw"), Mode: tool.Yolo}, nil)
	got := mustRun(t, h, `
		local r, err, list = tai.mcp.resolve("github.com/acme/suite")
		local rep, aerr = tai.mcp.add({ source = "github.com/acme/suite" })
		return r == nil, #list, list[1].name, list[2].url, err, rep == nil, aerr`)
	if got[0] != true || fmt.Sprint(got[1]) != "2" || got[2] != "alpha" || got[3] != "github.com/acme/suite/tree/main/servers/beta" {
		t.Fatalf("got %v", got)
	}
	for _, s := range []string{got[4].(string), got[6].(string)} {
		if !strings.Contains(s, "offers 2 servers") || !strings.Contains(s, "2. beta  github.com/acme/suite/tree/main/servers/beta") {
			t.Errorf("error %q does not list the servers", s)
		}
	}
	if got[5] != true {
		t.Errorf("mcp.add stored something")
	}
}

// TestResolveGoWithoutToolchain: with no go on PATH, a Go program that
// publishes an image runs the image, and one that publishes nothing is
// refused with the install line and what to add after it.
func TestResolveGoWithoutToolchain(t *testing.T) {
	roots := githubtest.Fixtures(t, "repos", "repos2")
	srv := httptest.NewServer(githubtest.HandlerOf(roots, nil))
	t.Cleanup(srv.Close)
	t.Setenv("TAI_GITHUB_API", srv.URL)
	t.Setenv("GITHUB_TOKEN", "")
	fakeGoPath(t)
	h := newHost(t, Options{Clean: true}, nil)
	res, err := h.Resolver()(ctxT(t), "github.com/mrjoshuak/godoc-mcp")
	if err != nil || res.Entry.Command != "docker" || !strings.Contains(strings.Join(res.Entry.Args, " "), "ghcr.io/mrjoshuak/godoc-mcp") {
		t.Fatalf("godoc-mcp: %s, %v; want its published image", describeEntry(res), err)
	}
	_, err = h.Resolver()(ctxT(t), "github.com/hloiseau/mcp-gopls")
	want := "a Go program with no published package: install it (go install github.com/hloiseau/mcp-gopls/v2/cmd/mcp-gopls@latest), then add mcp-gopls --workspace /absolute/path/to/your/go/project"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("mcp-gopls: %v; want %q", err, want)
	}
	// the README names the binary on two lines: one note says so
	if n := strings.Count(err.Error(), "a Go program to install first"); n > 1 {
		t.Errorf("the same note %d times:\n%v", n, err)
	}
}
