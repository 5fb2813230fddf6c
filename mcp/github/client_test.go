package github

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"tai/mcp/github/githubtest"
)

func fixtureAPI(t *testing.T) (*httptest.Server, *[]string) {
	t.Helper()
	root := githubtest.Fixtures(t, "repos")[0]
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(githubtest.Handler(root, func(s string) { mu.Lock(); seen = append(seen, s); mu.Unlock() }))
	t.Cleanup(srv.Close)
	return srv, &seen
}

func TestClientReadsFixtures(t *testing.T) {
	srv, seen := fixtureAPI(t)
	c, err := New(Options{Base: srv.URL, Token: "tok-123"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s := Source{Owner: "upstash", Repo: "context7"}
	br, err := c.DefaultBranch(ctx, s)
	if err != nil || br != "main" {
		t.Fatalf("DefaultBranch = %q, %v", br, err)
	}
	f, ok, err := c.File(ctx, s, "server.json")
	if err != nil || !ok || !strings.Contains(f.Text, "@upstash/context7-mcp") || f.Path != "server.json" {
		t.Fatalf("File(server.json) = %+v %v %v", f.Path, ok, err)
	}
	if _, ok, err := c.File(ctx, s, "mcp.json"); ok || err != nil {
		t.Fatalf("File(mcp.json) of a repository without one = %v, %v; want absent, no error", ok, err)
	}
	if _, ok, err := c.File(ctx, s, "EXPECTED.txt"); ok || err != nil {
		t.Fatalf("the fake serves EXPECTED.txt: %v %v", ok, err)
	}
	r, ok, err := c.Readme(ctx, s)
	if err != nil || !ok || r.Path != "README.md" || !strings.Contains(r.Text, "Context7") {
		t.Fatalf("Readme = %q %v %v", r.Path, ok, err)
	}
	list, err := c.List(ctx, s, "")
	if err != nil || len(list) == 0 {
		t.Fatalf("List = %v, %v", list, err)
	}
	if _, _, err := c.File(ctx, s, "../../etc/passwd"); err == nil || !strings.Contains(err.Error(), "leaves the repository") {
		t.Fatalf("File(../../etc/passwd) = %v", err)
	}
	_, err = c.DefaultBranch(ctx, Source{Owner: "nobody", Repo: "nothing"})
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "no such repository") || !strings.Contains(err.Error(), "GITHUB_TOKEN") {
		t.Fatalf("missing repository: %v", err)
	}
	for _, s := range *seen {
		if strings.Contains(s, "..") {
			t.Errorf("a request left the repository: %s", s)
		}
	}
	sub := Source{Owner: "upstash", Repo: "context7", Ref: "v2", Path: "."}
	if _, _, err := c.File(ctx, sub, "package.json"); err != nil {
		t.Fatal(err)
	}
	if last := (*seen)[len(*seen)-1]; !strings.Contains(last, "ref=v2") {
		t.Errorf("the ref is not sent: %s", last)
	}
}

// answering returns a client of an API that answers every request with h.
func answering(t *testing.T, token string, h http.HandlerFunc) *Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := New(Options{Base: srv.URL, Token: token, MaxFile: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestClientErrors(t *testing.T) {
	const token = "ghp_SECRETSECRETSECRET"
	s := Source{Owner: "o", Repo: "r"}
	ctx := context.Background()
	check := func(name string, err error, says ...string) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: no error", name)
			return
		}
		if strings.Contains(err.Error(), token) {
			t.Errorf("%s: the token appears in the error: %v", name, err)
		}
		for _, w := range says {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v does not say %q", name, err, w)
			}
		}
	}
	c := answering(t, token, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			t.Errorf("token not sent: %q", r.Header.Get("Authorization"))
		}
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Reset", "1790000000")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"message":"API rate limit exceeded for ` + token + `"}`))
	})
	_, _, err := c.File(ctx, s, "server.json")
	check("rate limit", err, "rate limit", "resets at")
	if !errors.Is(err, ErrRateLimit) {
		t.Errorf("rate limit error does not wrap ErrRateLimit: %v", err)
	}

	c = answering(t, token, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"message":"boom \u001b[31m ` + token + `"}`))
	})
	_, _, err = c.File(ctx, s, "server.json")
	check("500", err, "answered 500", "[REDACTED]")
	if strings.Contains(err.Error(), "\x1b") {
		t.Errorf("control characters from the API reach the error: %q", err)
	}

	c = answering(t, token, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
	})
	_, _, err = c.File(ctx, s, "server.json")
	check("401", err, "refused the token")

	c = answering(t, token, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.2:1/steal?t="+r.Header.Get("Authorization"), http.StatusFound)
	})
	_, _, err = c.File(ctx, s, "server.json")
	check("cross-host redirect", err, "another host", "not followed")
	if strings.Contains(err.Error(), "did not answer") {
		t.Errorf("a refused redirect reads as no answer: %v", err)
	}

	// a renamed repository answers 301 on the same host: followed, with
	// the token
	c = answering(t, token, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/repos/o/r/") {
			http.Redirect(w, r, strings.Replace(r.URL.Path, "/repos/o/r/", "/repositories/42/", 1), http.StatusMovedPermanently)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+token {
			t.Errorf("token not sent after a same-host redirect")
		}
		_, _ = w.Write([]byte(`{"type":"file","encoding":"base64","content":"aGk="}`))
	})
	if f, ok, err := c.File(ctx, s, "server.json"); err != nil || !ok || f.Text != "hi" {
		t.Errorf("same-host redirect: %q %v %v", f.Text, ok, err)
	}

	big := strings.Repeat("A", 50<<20)
	c = answering(t, token, func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"type":"file","encoding":"base64","content":"` + big + `"}`))
	})
	_, _, err = c.File(ctx, s, "server.json")
	check("50 MB answer", err, "larger than")

	c = answering(t, token, func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"type":"file","encoding":"base64","size":5000,"content":"` + strings.Repeat("QUFB", 500) + `"}`))
	})
	_, _, err = c.File(ctx, s, "server.json")
	check("file over the cap", err, "more than the 1000 bytes")

	c = answering(t, token, func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`[{"name":"a","type":"file"}]`))
	})
	_, _, err = c.File(ctx, s, "server.json")
	check("folder", err, "is a folder")

	if _, err := New(Options{Base: "https://user:" + token + "@api.example/"}); err == nil || strings.Contains(err.Error(), token) {
		t.Errorf("a base with credentials: %v", err)
	}
	if _, err := New(Options{Base: "file:///etc"}); err == nil {
		t.Error("a file: base is accepted")
	}
}

func TestClientDeadline(t *testing.T) {
	release := make(chan struct{})
	c := answering(t, "", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := c.File(ctx, Source{Owner: "o", Repo: "r"}, "x")
	if err == nil || !strings.Contains(err.Error(), "stopped") {
		t.Fatalf("cancelled read: %v", err)
	}
}
