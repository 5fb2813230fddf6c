package github

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Source
	}{
		{"github.com/upstash/context7", Source{Owner: "upstash", Repo: "context7"}},
		{"https://github.com/upstash/context7", Source{Owner: "upstash", Repo: "context7"}},
		{"http://www.github.com/upstash/context7/", Source{Owner: "upstash", Repo: "context7"}},
		{"https://github.com/upstash/context7.git", Source{Owner: "upstash", Repo: "context7"}},
		{"https://github.com/upstash/context7#readme", Source{Owner: "upstash", Repo: "context7"}},
		{"  https://GitHub.com/upstash/context7?tab=readme-ov-file#install  ", Source{Owner: "upstash", Repo: "context7"}},
		{"https://github.com/upstash/context7/issues/12", Source{Owner: "upstash", Repo: "context7"}},
		{"https://github.com/modelcontextprotocol/servers/tree/main/src/memory", Source{Owner: "modelcontextprotocol", Repo: "servers", Ref: "main", Path: "src/memory"}},
		{"github.com/stripe/agent-toolkit/tree/v1.2/tools/./modelcontextprotocol/", Source{Owner: "stripe", Repo: "agent-toolkit", Ref: "v1.2", Path: "tools/modelcontextprotocol"}},
		{"github.com/stripe/agent-toolkit/blob/main/tools/modelcontextprotocol/README.md", Source{Owner: "stripe", Repo: "agent-toolkit", Ref: "main", Path: "tools/modelcontextprotocol"}},
		{"github.com/o/r/tree/main", Source{Owner: "o", Repo: "r", Ref: "main"}},
		{"github.com/o/my.repo_x-1", Source{Owner: "o", Repo: "my.repo_x-1"}},
	} {
		if !IsSource(c.in) {
			t.Errorf("IsSource(%q) = false", c.in)
		}
		got, err := Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("Parse(%q) = %+v, want %+v", c.in, got, c.want)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, c := range []struct{ in, says string }{
		{"github.com/upstash", "names no repository"},
		{"github.com/", "names no repository"},
		{"github.com/-bad/repo", "not a GitHub user"},
		{"github.com/o/..", "not a GitHub repository name"},
		{"github.com/o/r/tree/main/../../etc", "leaves the repository"},
		{"github.com/o/r/tree/main/a/%2e%2e/%2e%2e/x", "leaves the repository"},
		{"github.com/o/r/tree/main/a%2fb", "leaves the repository"},
		{"github.com/o/r/tree/..%2f/x", "not a branch"},
	} {
		_, err := Parse(c.in)
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("Parse(%q) = %v, want an error saying %q", c.in, err, c.says)
		}
	}
	for _, in := range []string{"gitlab.com/o/r", "https://github.company.com/o/r", "see github.com/o/r", `{"url": "https://github.com/o/r"}`, "notgithub.com/o/r"} {
		if IsSource(in) {
			t.Errorf("IsSource(%q) = true", in)
		}
	}
}

func TestSourceString(t *testing.T) {
	s := Source{Owner: "o", Repo: "r", Ref: "main", Path: "src/x"}
	if s.String() != "github.com/o/r/tree/main/src/x" || s.ID() != "github:o/r" || s.Join("server.json") != "src/x/server.json" {
		t.Errorf("%s %s %s", s, s.ID(), s.Join("server.json"))
	}
}
