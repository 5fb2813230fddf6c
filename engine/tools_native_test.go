package engine

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tai/engine/builtin"
	"tai/engine/llm"
	"tai/engine/tool"
)

// dispatch dispatches a tool on a new session of e and fails the test on a
// Go error.
func dispatch(t *testing.T, e *Engine, name string, args map[string]any) tool.Result {
	t.Helper()
	return dispatchIn(t, newSession(t, e), name, args)
}

// dispatchIn dispatches a tool in the session s and fails the test on a Go
// error.
func dispatchIn(t *testing.T, s *Session, name string, args map[string]any) tool.Result {
	t.Helper()
	res, err := s.Dispatch(turnCtx(t), name, args)
	if err != nil {
		t.Fatalf("%s(%v): %v", name, args, err)
	}
	return res
}

func TestShellTool(t *testing.T) {
	e := newEngine(t, nil, &Options{Mode: tool.Yolo})
	if err := os.Mkdir(filepath.Join(e.Dir(), "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   map[string]any
		want   []string
		errRes bool
	}{
		{name: "sh -c", args: map[string]any{"command": "echo hello; echo oops >&2"}, want: []string{"exit status 0", "--- stdout ---\nhello\n", "--- stderr ---\noops\n"}},
		{name: "argv without shell", args: map[string]any{"argv": []any{"printf", "%s|", "a b", "$HOME"}}, want: []string{"a b|$HOME|"}},
		{name: "cwd", args: map[string]any{"command": "pwd", "cwd": "sub"}, want: []string{filepath.Join(e.Dir(), "sub")}},
		{name: "exit status", args: map[string]any{"command": "exit 3"}, want: []string{"exit status 3"}, errRes: true},
		{name: "timeout kills the group", args: map[string]any{"command": "sleep 30 & sleep 30", "timeout": 1.0}, want: []string{"timeout of 1s"}, errRes: true},
		{name: "missing program", args: map[string]any{"argv": []any{"no-such-program-xyz"}}, want: []string{"could not run"}, errRes: true},
		{name: "both forms", args: map[string]any{"command": "ls", "argv": []any{"ls"}}, want: []string{"exactly one"}, errRes: true},
		{name: "bad timeout", args: map[string]any{"command": "ls", "timeout": 1e6}, want: []string{"out of range"}, errRes: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := dispatch(t, e, "shell", tt.args)
			for _, w := range tt.want {
				if !strings.Contains(res.Text(), w) {
					t.Errorf("output lacks %q:\n%s", w, res.Text())
				}
			}
			if res.IsError != tt.errRes {
				t.Errorf("isError = %v, want %v:\n%s", res.IsError, tt.errRes, res.Text())
			}
		})
	}
}

func TestShellSpillsToRecordAndRecordReadReadsIt(t *testing.T) {
	e := newEngine(t, nil, &Options{Mode: tool.Yolo})
	// 200,000 numbered lines: far over ResultMax.
	res := dispatch(t, e, "shell", map[string]any{"command": "seq 1 200000"})
	text := res.Text()
	if len(text) > tool.ResultMax || !strings.Contains(text, "record_read") {
		t.Fatalf("big output not spilled (%d bytes)", len(text))
	}
	id := text[strings.Index(text, "record ")+len("record "):]
	id = id[:strings.IndexAny(id, ". ")]
	var all strings.Builder
	offset := 0
	for i := 0; ; i++ {
		if i > 200 {
			t.Fatal("record_read never reached the end")
		}
		r := dispatch(t, e, "record_read", map[string]any{"id": id, "offset": float64(offset), "length": float64(builtin.RecordReadMax)})
		head, body, _ := strings.Cut(r.Text(), "\n")
		if r.IsError || !strings.HasPrefix(head, "[record "+id) {
			t.Fatalf("record_read: %.200s", r.Text())
		}
		all.WriteString(body)
		offset += len(body)
		if !strings.Contains(head, "remain") {
			break
		}
	}
	full := all.String()
	var want strings.Builder
	for i := 1; i <= 200000; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	if !strings.Contains(full, "--- stdout ---\n"+want.String()) {
		t.Fatalf("the record does not hold the whole output (%d bytes)", len(full))
	}
	if r := dispatch(t, e, "record_read", map[string]any{"id": "nope"}); !r.IsError {
		t.Fatalf("unknown record: %s", r.Text())
	}
	if err := e.Store().RecordDelete(id); err != nil {
		t.Fatal(err)
	}
	if r := dispatch(t, e, "record_read", map[string]any{"id": id}); !r.IsError || !strings.Contains(r.Text(), "deleted") {
		t.Fatalf("deleted record: the model should be told why it is missing: %s", r.Text())
	}
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFileTools(t *testing.T) {
	e := newEngine(t, nil, &Options{Mode: tool.Yolo})
	writeFiles(t, e.Dir(), map[string]string{
		"a.txt":            "one\ntwo\nthree\nfour\n",
		"dup.txt":          "x = 1\ny = 2\nx = 1\n",
		"src/main.go":      "package main\n\nfunc main() { println(\"Hello\") }\n",
		"src/lib/util.go":  "package lib\n\n// hello helper\nfunc Hello() {}\n",
		"src/lib/util.txt": "hello text\n",
		".git/config":      "hello git\n",
		"bin.dat":          "\x00\x01hello",
	})
	tests := []struct {
		name   string
		tool   string
		args   map[string]any
		want   string
		errRes bool
	}{
		{"read whole", "read_file", map[string]any{"path": "a.txt"}, "one\ntwo\nthree\nfour\n", false},
		{"read range", "read_file", map[string]any{"path": "a.txt", "start_line": 2.0, "end_line": 3.0}, "[a.txt, lines 2-3 of 4]\ntwo\nthree\n", false},
		{"read from line", "read_file", map[string]any{"path": "a.txt", "start_line": 4.0}, "[a.txt, lines 4-4 of 4]\nfour\n", false},
		{"read past end", "read_file", map[string]any{"path": "a.txt", "start_line": 9.0}, "past the end", true},
		{"read bad range", "read_file", map[string]any{"path": "a.txt", "start_line": 3.0, "end_line": 2.0}, "not valid", true},
		{"read missing", "read_file", map[string]any{"path": "nope.txt"}, "no such file", true},
		{"read binary", "read_file", map[string]any{"path": "bin.dat"}, "binary", true},
		{"read dir", "read_file", map[string]any{"path": "src"}, "list_dir", true},
		{"list", "list_dir", map[string]any{"path": "src"}, "lib/\nmain.go\t", false},
		{"glob **", "glob", map[string]any{"pattern": "**/*.go"}, "src/lib/util.go\nsrc/main.go\n", false},
		{"glob one level", "glob", map[string]any{"pattern": "src/*.go"}, "src/main.go\n", false},
		{"glob under path", "glob", map[string]any{"pattern": "**/util.*", "path": "src"}, "lib/util.go\nlib/util.txt\n", false},
		{"glob absolute", "glob", map[string]any{"pattern": filepath.Join(e.Dir(), "src", "**", "*.txt")}, "lib/util.txt\n", false},
		{"glob nothing", "glob", map[string]any{"pattern": "**/*.rs"}, "no paths", false},
		{"glob malformed", "glob", map[string]any{"pattern": "[a"}, "malformed", true},
		{"grep", "grep", map[string]any{"pattern": "hello"}, "src/lib/util.go:3: // hello helper\nsrc/lib/util.txt:1: hello text\n", false},
		{"grep ignore case with glob", "grep", map[string]any{"pattern": "hello", "ignore_case": true, "glob": "**/*.go"},
			"src/lib/util.go:3: // hello helper\nsrc/lib/util.go:4: func Hello() {}\nsrc/main.go:3: func main() { println(\"Hello\") }\n", false},
		{"grep bounded", "grep", map[string]any{"pattern": "o", "max_matches": 1.0, "path": "a.txt"}, "a.txt:1: one\n[stopped at 1 matching lines", false},
		{"grep bad regexp", "grep", map[string]any{"pattern": "(("}, "not a valid RE2", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := dispatch(t, e, tt.tool, tt.args)
			if res.IsError != tt.errRes || !strings.Contains(res.Text(), tt.want) {
				t.Fatalf("%s = %q (isError %v); want %q (isError %v)", tt.tool, res.Text(), res.IsError, tt.want, tt.errRes)
			}
		})
	}
}

func TestWriteAndEditFile(t *testing.T) {
	e := newEngine(t, nil, &Options{Mode: tool.Yolo})
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(e.Dir(), name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if r := dispatch(t, e, "write_file", map[string]any{"path": "new/dir/f.txt", "content": "alpha\nbeta\nalpha\n"}); r.IsError {
		t.Fatal(r.Text())
	}
	dispatch(t, e, "write_file", map[string]any{"path": "new/dir/f.txt", "content": "gamma\n", "append": true})
	if got := read("new/dir/f.txt"); got != "alpha\nbeta\nalpha\ngamma\n" {
		t.Fatalf("file = %q", got)
	}
	tests := []struct {
		name   string
		args   map[string]any
		want   string
		errRes bool
		file   string
	}{
		{"ambiguous", map[string]any{"old_string": "alpha", "new_string": "A"}, "occurs 2 times in <path> (at lines 1, 3)", true, "alpha\nbeta\nalpha\ngamma\n"},
		{"absent", map[string]any{"old_string": "delta", "new_string": "D"}, "was not found", true, "alpha\nbeta\nalpha\ngamma\n"},
		{"same", map[string]any{"old_string": "beta", "new_string": "beta"}, "nothing to change", true, "alpha\nbeta\nalpha\ngamma\n"},
		{"unique with context", map[string]any{"old_string": "beta\nalpha", "new_string": "beta\nALPHA"}, "replaced 1", false, "alpha\nbeta\nALPHA\ngamma\n"},
		{"replace all", map[string]any{"old_string": "a\n", "new_string": "a!\n", "replace_all": true}, "replaced 3", false, "alpha!\nbeta!\nALPHA\ngamma!\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.args["path"] = "new/dir/f.txt"
			res := dispatch(t, e, "edit_file", tt.args)
			if res.IsError != tt.errRes || !strings.Contains(res.Text(), tt.want) {
				t.Fatalf("edit_file = %q (isError %v); want %q", res.Text(), res.IsError, tt.want)
			}
			if got := read("new/dir/f.txt"); got != tt.file {
				t.Fatalf("file = %q, want %q", got, tt.file)
			}
		})
	}
}

func TestHTTPFetch(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, "<p>hello</p>")
		case "/big":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, strings.Repeat("x", 5000))
		case "/image":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte{0x89, 'P', 'N', 'G'})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	e := newEngine(t, nil, &Options{Mode: tool.Yolo})
	tests := []struct {
		name   string
		args   map[string]any
		want   []string
		errRes bool
	}{
		{"text", map[string]any{"url": srv.URL + "/page"}, []string{"200 OK", "text/html", "<p>hello</p>"}, false},
		{"size cap", map[string]any{"url": srv.URL + "/big", "max_bytes": 1000.0}, []string{strings.Repeat("x", 1000) + "\n[the body is longer than max_bytes=1000"}, false},
		{"not text", map[string]any{"url": srv.URL + "/image"}, []string{"image/png", "not text"}, true},
		{"404", map[string]any{"url": srv.URL + "/missing"}, []string{"404 Not Found"}, true},
		{"bad scheme", map[string]any{"url": "file:///etc/passwd"}, []string{"not an http"}, true},
		{"bad cap", map[string]any{"url": srv.URL, "max_bytes": 0.0}, []string{"out of range"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := dispatch(t, e, "http_fetch", tt.args)
			for _, w := range tt.want {
				if !strings.Contains(res.Text(), w) {
					t.Errorf("answer lacks %q:\n%.300s", w, res.Text())
				}
			}
			if strings.Contains(res.Text(), strings.Repeat("x", 1001)) {
				t.Error("the body passed the cap")
			}
			if res.IsError != tt.errRes {
				t.Errorf("isError = %v, want %v", res.IsError, tt.errRes)
			}
		})
	}
}

func TestVaultTools(t *testing.T) {
	e := newEngine(t, nil, &Options{Mode: tool.Yolo})
	const value = "hunter2-very-secret"
	res := dispatch(t, e, "secret_set", map[string]any{"name": "db-pass", "value": value, "description": "database"})
	if res.IsError || strings.Contains(res.Text(), value) {
		t.Fatalf("secret_set = %q", res.Text())
	}
	if r := dispatch(t, e, "secret_set", map[string]any{"name": "bad name!", "value": "x"}); !r.IsError {
		t.Fatalf("a bad secret name was accepted: %s", r.Text())
	}
	list := dispatch(t, e, "secret_list", nil)
	if !strings.Contains(list.Text(), "db-pass") || !strings.Contains(list.Text(), "database") || strings.Contains(list.Text(), value) {
		t.Fatalf("secret_list = %q", list.Text())
	}
	if r := dispatch(t, e, "shell", map[string]any{"command": "echo " + value}); strings.Contains(r.Text(), value) {
		t.Fatalf("a stored secret printed by a tool was not redacted: %q", r.Text())
	}
	if r := dispatch(t, e, "secret_delete", map[string]any{"name": "db-pass"}); r.IsError {
		t.Fatal(r.Text())
	}
	if r := dispatch(t, e, "secret_delete", map[string]any{"name": "db-pass"}); !r.IsError {
		t.Fatalf("deleting twice: %s", r.Text())
	}
	tail := dispatch(t, e, "audit_tail", map[string]any{"n": 3.0, "kind": "tool"})
	lines := strings.Split(strings.TrimSpace(tail.Text()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "tool secret_delete") || !strings.Contains(lines[1], " ok ") ||
		!strings.Contains(lines[2], " error ") || !strings.Contains(lines[0], "tool shell") {
		t.Fatalf("audit_tail = %q", tail.Text())
	}
	if strings.Contains(tail.Text(), value) {
		t.Fatal("the audit trail shows the secret")
	}
}

func TestProfileTools(t *testing.T) {
	person := &prompter{answer: "yes"}
	e := newEngine(t, nil, &Options{Mode: tool.Yolo, Prompter: person})
	s := newSession(t, e)
	if p := s.Profile(); p.Name != llm.OllamaProfileName {
		t.Fatalf("with no environment the profile is %q, want the Ollama fallback", p.Name)
	}
	res := dispatchIn(t, s, "profile_create", map[string]any{"name": "work", "provider": "anthropic", "model": "claude-x", "key_env": "WORK_KEY", "system": "be terse"})
	if res.IsError || !strings.Contains(res.Text(), "created profile work") {
		t.Fatalf("profile_create = %q", res.Text())
	}
	res = dispatchIn(t, s, "profile_create", map[string]any{"name": "work", "model": "claude-y"})
	if !strings.Contains(res.Text(), "updated profile work (anthropic claude-y)") {
		t.Fatalf("update = %q", res.Text())
	}
	if r := dispatchIn(t, s, "profile_create", map[string]any{"name": "bad", "provider": "nope"}); !r.IsError || !strings.Contains(r.Text(), "unknown provider") {
		t.Fatalf("a bad provider: %q", r.Text())
	}
	if r := dispatchIn(t, s, "profile_switch", map[string]any{"name": "work"}); r.IsError {
		t.Fatal(r.Text())
	}
	if p := s.Profile(); p.Name != "work" || p.Model != "claude-y" || p.System != "be terse" {
		t.Fatalf("current profile = %+v", p)
	}
	if cur, _ := llm.CurrentProfileName(e.Store()); cur != "" {
		t.Fatalf("the model's switch was remembered for later runs: %q", cur)
	}
	if len(person.asked) != 3 {
		t.Fatalf("the person was asked %d times, want once per change: %q", len(person.asked), person.asked)
	}
	if r := dispatchIn(t, s, "profile_list", nil); !strings.Contains(r.Text(), "* work\tanthropic\tclaude-y") {
		t.Fatalf("profile_list = %q", r.Text())
	}
	if r := dispatchIn(t, s, "profile_show", nil); !strings.Contains(r.Text(), `"key_env": "WORK_KEY"`) {
		t.Fatalf("profile_show = %q", r.Text())
	}
	if r := dispatchIn(t, s, "profile_switch", map[string]any{"name": "missing"}); !r.IsError || !strings.Contains(r.Text(), "work") {
		t.Fatalf("switching to a missing profile: %q", r.Text())
	}
}

func TestLuaToolIsGated(t *testing.T) {
	runner := func(_ context.Context, chunk string) (string, []any, error) {
		if chunk == "error('x')" {
			return "before\n", nil, fmt.Errorf("[string]:1: x")
		}
		return "printed " + chunk + "\n", []any{42.0, "s"}, nil
	}
	if e := newEngine(t, nil, nil); func() bool { _, ok := e.Tools().Get("lua"); return ok }() {
		t.Fatal("the lua tool is registered without a runner")
	}
	p := &prompter{allow: false}
	e := newEngine(t, nil, &Options{LuaRunner: runner, Prompter: p})
	if _, err := newSession(t, e).Dispatch(turnCtx(t), "lua", map[string]any{"chunk": "return 42"}); err == nil {
		t.Fatal("the lua tool ran without approval")
	}
	if len(p.seen()) != 1 || p.seen()[0].Tool != "lua" {
		t.Fatalf("consents = %+v", p.seen())
	}
	p.allow = true
	if r := dispatch(t, e, "lua", map[string]any{"chunk": "return 42"}); r.Text() != "printed return 42\nreturned: [42,\"s\"]\n" {
		t.Fatalf("lua = %q", r.Text())
	}
	if r := dispatch(t, e, "lua", map[string]any{"chunk": "error('x')"}); !r.IsError || r.Text() != "before\nerror: [string]:1: x\n" {
		t.Fatalf("lua error = %q", r.Text())
	}
}

func TestToolSearchEnablesTools(t *testing.T) {
	client := &scripted{steps: []func(context.Context, llm.Request, func(string)) (llm.Response, error){
		calls("tool_search", `{"query":"convert currency exchange"}`),
		calls("currency_convert", `{"amount":3}`),
		say("3 EUR"),
	}}
	e := newEngine(t, client, &Options{Mode: tool.Yolo})
	addTool(t, e.Tools(), textTool("currency_convert", "Convert an amount between currencies at today's exchange rate", true, "3 EUR"))
	a := newSession(t, e).NewAgent(&AgentOptions{Select: tool.SelectOptions{Budget: -1}}) // it would fit: choose anyway
	if _, err := a.RunTurn(turnCtx(t), "hi", nil); err != nil {
		t.Fatal(err)
	}
	reqs := client.requests()
	offered := func(r llm.Request) bool {
		for _, s := range r.Tools {
			if s.Name == "currency_convert" {
				return true
			}
		}
		return false
	}
	if offered(reqs[0]) || !offered(reqs[1]) || !offered(reqs[2]) {
		t.Fatalf("currency_convert offered: %v %v %v; want only after tool_search", offered(reqs[0]), offered(reqs[1]), offered(reqs[2]))
	}
	if got := a.Enabled(); len(got) != 1 || got[0] != "currency_convert" {
		t.Fatalf("enabled = %v", got)
	}
	found := reqs[1].Messages[len(reqs[1].Messages)-1].Content
	if !strings.Contains(found, "currency_convert: Convert an amount") {
		t.Fatalf("tool_search answered %q", found)
	}
}
