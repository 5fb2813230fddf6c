package githubtest

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Hidden are file names in a repository folder the fake never serves (a
// fixture's notes on what the repository holds).
var Hidden = []string{"EXPECTED.txt"}

// Handler serves the repositories under root. Requests it reads are passed
// to seen, when not nil, as "METHOD path?query".
func Handler(root string, seen func(string)) http.Handler {
	return HandlerOf([]string{root}, seen)
}

// HandlerOf serves the repositories under each of roots; a repository is
// looked up in the first root that holds it.
func HandlerOf(roots []string, seen func(string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if seen != nil {
			seen(r.Method + " " + r.URL.RequestURI())
		}
		parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 5)
		if r.Method != http.MethodGet || len(parts) < 3 || parts[0] != "repos" {
			notFound(w)
			return
		}
		if strings.ContainsAny(parts[1]+parts[2], `/\`) || strings.HasPrefix(parts[1], ".") || strings.HasPrefix(parts[2], ".") {
			notFound(w)
			return
		}
		dir := ""
		for _, root := range roots {
			d := filepath.Join(root, parts[1]+"__"+parts[2])
			if st, err := os.Stat(d); err == nil && st.IsDir() {
				dir = d
				break
			}
		}
		if dir == "" {
			notFound(w)
			return
		}
		rest := ""
		if len(parts) == 5 {
			rest = parts[4]
		}
		switch {
		case len(parts) == 3:
			writeJSON(w, map[string]any{"full_name": parts[1] + "/" + parts[2], "default_branch": "main"})
		case parts[3] == "readme":
			serveReadme(w, dir, rest)
		case parts[3] == "contents":
			serveContents(w, dir, rest)
		default:
			notFound(w)
		}
	})
}

func serveContents(w http.ResponseWriter, dir, p string) {
	p = path.Clean("/" + p)[1:]
	full := filepath.Join(dir, filepath.FromSlash(p))
	if hidden(path.Base(p)) {
		notFound(w)
		return
	}
	st, err := os.Stat(full)
	if err != nil {
		notFound(w)
		return
	}
	if st.IsDir() {
		ents, _ := os.ReadDir(full)
		list := []map[string]any{}
		for _, e := range ents {
			if hidden(e.Name()) {
				continue
			}
			typ, size := "file", int64(0)
			if e.IsDir() {
				typ = "dir"
			} else if info, err := e.Info(); err == nil {
				size = info.Size()
			}
			list = append(list, map[string]any{"name": e.Name(), "path": path.Join(p, e.Name()), "type": typ, "size": size})
		}
		writeJSON(w, list)
		return
	}
	serveFile(w, full, p)
}

func serveReadme(w http.ResponseWriter, dir, sub string) {
	sub = path.Clean("/" + sub)[1:]
	ents, err := os.ReadDir(filepath.Join(dir, filepath.FromSlash(sub)))
	if err != nil {
		notFound(w)
		return
	}
	var names []string
	for _, e := range ents {
		if !e.IsDir() && strings.HasPrefix(strings.ToLower(e.Name()), "readme") {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		notFound(w)
		return
	}
	sort.Strings(names)
	p := path.Join(sub, names[0])
	serveFile(w, filepath.Join(dir, filepath.FromSlash(p)), p)
}

func serveFile(w http.ResponseWriter, full, p string) {
	data, err := os.ReadFile(full)
	if err != nil {
		notFound(w)
		return
	}
	writeJSON(w, map[string]any{
		"type": "file", "encoding": "base64", "size": len(data), "name": path.Base(p), "path": p,
		"content": base64.StdEncoding.EncodeToString(data),
	})
}

func hidden(name string) bool {
	for _, h := range Hidden {
		if name == h {
			return true
		}
	}
	return false
}

func notFound(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write([]byte(`{"message":"Not Found","documentation_url":"https://docs.github.com/rest"}`))
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// RequireFixtures names the variable that makes a test whose fixtures are
// missing fail instead of skipping: CI sets it to 1, so that it always
// runs them.
const RequireFixtures = "TAI_REQUIRE_FIXTURES"

// Fixtures returns the folders of the shared fixture sets named ("repos",
// "repos2"): ../shared/fixtures/NAME beside the module's root (the folder
// holding go.mod, found upward from the working directory). When one is
// missing, as in a fresh clone with nothing beside it, t is skipped with
// one line saying so, or fails when $TAI_REQUIRE_FIXTURES is 1. Every test
// that reads the shared fixtures finds them through it.
func Fixtures(t testing.TB, names ...string) []string {
	t.Helper()
	var out []string
	for _, name := range names {
		p, err := shared(name)
		if err != nil {
			msg := fmt.Sprintf("needs ../shared/fixtures/%s beside the module, absent here", name)
			if !errors.Is(err, fs.ErrNotExist) {
				msg = fmt.Sprintf("needs ../shared/fixtures/%s beside the module: %v", name, err)
			}
			if os.Getenv(RequireFixtures) == "1" {
				t.Fatalf("%s; %s=1 requires them", msg, RequireFixtures)
			}
			t.Skipf("skipped: %s (%s=1 makes it a failure)", msg, RequireFixtures)
		}
		out = append(out, p)
	}
	return out
}

func shared(name string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", os.ErrNotExist
		}
		dir = up
	}
	p := filepath.Join(filepath.Dir(dir), "shared", "fixtures", name)
	if _, err := os.Stat(p); err != nil {
		return "", err
	}
	return p, nil
}
