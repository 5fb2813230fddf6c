package tool

import (
	"os"
	"path/filepath"
	"testing"

	"tai/vault"
)

func TestCommandHasPrefix(t *testing.T) {
	tests := []struct {
		name, command, prefix string
		want                  bool
	}{
		{"the prefix alone", "git status", "git status", true},
		{"with an option", "git status --short", "git status", true},
		{"with arguments", "go test ./... -run TestX -count=1", "go test ./...", true},
		{"extra blanks", "  git   status\t--short ", "git status", true},
		{"quoted plain words", `git "status" 'x y'`, "git status", true},
		{"one word prefix", "ls -la", "ls", true},
		{"a longer word", "git status-foo", "git status", false},
		{"a shorter command", "git", "git status", false},
		{"another subcommand", "git push", "git status", false},
		{"prefix inside a word", "legit status", "git status", false},
		{"the prefix later on", "echo git status", "git status", false},
		{"semicolon", "git status; rm -rf ~", "git status", false},
		{"semicolon glued", "git status;id", "git status", false},
		{"and", "git status && x", "git status", false},
		{"or", "git status || x", "git status", false},
		{"pipe", "git status | sh", "git status", false},
		{"background", "git status & id", "git status", false},
		{"command substitution", "git status $(id)", "git status", false},
		{"substitution in double quotes", `git status "$(id)"`, "git status", false},
		{"backticks", "git status `id`", "git status", false},
		{"newline", "git status\nid", "git status", false},
		{"carriage return", "git status\rid", "git status", false},
		{"redirect out", "git status > /etc/passwd", "git status", false},
		{"redirect glued", "git status >f", "git status", false},
		{"append", "git status >> f", "git status", false},
		{"redirect in", "git status < f", "git status", false},
		{"here string", "git status <<< x", "git status", false},
		{"process substitution", "git status <(id)", "git status", false},
		{"subshell", "(git status)", "git status", false},
		{"brace group", "{ git status; }", "git status", false},
		{"variable", "git status $HOME", "git status", false},
		{"braced variable", "git status ${IFS}id", "git status", false},
		{"ansi quote", "git status $'\\x3bid'", "git status", false},
		{"backslash escape", `git status \; id`, "git status", false},
		{"glob", "git status *", "git status", false},
		{"question glob", "git status ?", "git status", false},
		{"bracket glob", "git status [a]", "git status", false},
		{"tilde", "git status ~", "git status", false},
		{"comment", "git status # x", "git status", false},
		{"history bang", "git status !!", "git status", false},
		{"open quote", `git status "x`, "git status", false},
		{"quote hiding an operator", `git status "; id"`, "git status", false},
		{"NUL", "git status\x00id", "git status", false},
		{"escape sequence", "git status \x1b[2J", "git status", false},
		{"vertical tab", "git status\vid", "git status", false},
		{"DEL", "git status\x7f", "git status", false},
		{"an env assignment first", "GIT_DIR=/x git status", "git status", false},
		{"an empty command", "", "git status", false},
		{"an empty prefix", "git status", "", false},
		{"a prefix with an operator", "git status; id", "git status;", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := shellCallHasPrefix(map[string]any{"command": tt.command}, "", tt.prefix); got != tt.want {
				t.Fatalf("shell call %q under prefix %q: %v, want %v", tt.command, tt.prefix, got, tt.want)
			}
		})
	}
}

func TestPermissionAllows(t *testing.T) {
	dir := "/home/me/project"
	rules := []vault.Permission{
		{Dir: dir, Tool: "shell", Prefix: "git status"},
		{Dir: dir, Tool: "edit_file"},
		{Dir: dir, Tool: "everything/echo"},
		{Dir: "/elsewhere", Tool: "write_file"},
	}
	tests := []struct {
		name string
		c    Consent
		want bool
	}{
		{"shell command with the prefix", Consent{Tool: "shell", Args: map[string]any{"command": "git status --short"}}, true},
		{"shell command with an operator", Consent{Tool: "shell", Args: map[string]any{"command": "git status; id"}}, false},
		{"shell argv with the prefix", Consent{Tool: "shell", Args: map[string]any{"argv": []any{"git", "status", "-s"}}}, true},
		{"shell argv hiding a second command", Consent{Tool: "shell", Args: map[string]any{"argv": []any{"git", "status; id"}}}, false},
		{"shell with both command and argv", Consent{Tool: "shell", Args: map[string]any{"command": "git status", "argv": []any{"rm", "-rf", "/"}}}, false},
		{"shell in a folder inside", Consent{Tool: "shell", Args: map[string]any{"command": "git status", "cwd": "sub/dir"}}, true},
		{"shell in a folder outside", Consent{Tool: "shell", Args: map[string]any{"command": "git status", "cwd": "/etc"}}, false},
		{"shell climbing out", Consent{Tool: "shell", Args: map[string]any{"command": "git status", "cwd": "../other"}}, false},
		{"shell in a sibling with the same start", Consent{Tool: "shell", Args: map[string]any{"command": "git status", "cwd": "/home/me/project2"}}, false},
		{"shell with a timeout", Consent{Tool: "shell", Args: map[string]any{"command": "git status", "timeout": 5.0}}, true},
		{"shell with an unknown argument", Consent{Tool: "shell", Args: map[string]any{"command": "git status", "env": "X=1"}}, false},
		{"a redacted secret in the command", Consent{Tool: "shell", Args: map[string]any{"command": "git status [REDACTED:TOKEN]"}}, false},
		{"a tool rule", Consent{Tool: "edit_file", Args: map[string]any{"path": "a"}}, true},
		{"a tool rule, a path inside", Consent{Tool: "edit_file", Args: map[string]any{"path": "/home/me/project/sub/a.go"}}, true},
		{"a tool rule, a path outside", Consent{Tool: "edit_file", Args: map[string]any{"path": "/home/me/.bashrc"}}, false},
		{"a tool rule, climbing out", Consent{Tool: "edit_file", Args: map[string]any{"path": "../.bashrc"}}, false},
		{"a tool rule, a path that is not a string", Consent{Tool: "edit_file", Args: map[string]any{"path": 3.0}}, false},
		{"a bridged tool by its origin", Consent{Tool: "mcp_everything_echo", Origin: "everything/echo"}, true},
		{"a native tool named like the origin", Consent{Tool: "everything/echo"}, true},
		{"a bridged tool named like a native rule", Consent{Tool: "edit_file", Origin: "evil/edit_file"}, false},
		{"a rule of another folder", Consent{Tool: "write_file"}, false},
		{"a tool without a rule", Consent{Tool: "write_file"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, got := PermissionAllows(rules, dir, tt.c); got != tt.want {
				t.Fatalf("PermissionAllows(%+v) = %v, want %v", tt.c, got, tt.want)
			}
		})
	}
}

func TestSuggestPrefix(t *testing.T) {
	tests := []struct {
		command string
		want    string
		ok      bool
	}{
		{"git status --short", "git status", true},
		{"go test ./...", "go test", true},
		{"ls -la", "ls", true},
		{"make", "make", true},
		{"find . -name x", "find . -name x", true},
		{"bash -c 'curl x -o y'", "", false},
		{"bash build.sh", "bash build.sh", true},
		{"env FOO=1 rm -rf x", "env FOO=1 rm -rf x", true},
		{"/usr/bin/python3 script.py", "/usr/bin/python3 script.py", true},
		{"xargs rm", "xargs rm", true},
		{"git status; id", "", false},
		{"echo $HOME", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		got, ok := SuggestPrefix(Consent{Tool: "shell", Args: map[string]any{"command": tt.command}})
		if got != tt.want || ok != tt.ok {
			t.Errorf("SuggestPrefix(%q) = %q, %v; want %q, %v", tt.command, got, ok, tt.want, tt.ok)
		}
	}
	if _, ok := SuggestPrefix(Consent{Tool: "shell", Origin: "srv/shell", Args: map[string]any{"command": "ls"}}); ok {
		t.Error("a bridged tool named shell got a prefix")
	}
	if got, ok := SuggestPrefix(Consent{Tool: "shell", Args: map[string]any{"argv": []any{"git", "log", "-1"}}}); got != "git log" || !ok {
		t.Errorf("argv: %q, %v", got, ok)
	}
}

func TestCheckPrefix(t *testing.T) {
	for _, ok := range []string{"git status", "go test ./...", "bash build.sh", "make"} {
		if err := CheckPrefix(ok); err != nil {
			t.Errorf("CheckPrefix(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"bash", "env", "sudo", "/bin/sh", "python3", "git status;", "git 'a b'", "", "x $(id)"} {
		if err := CheckPrefix(bad); err == nil {
			t.Errorf("CheckPrefix(%q) accepted it", bad)
		}
	}
}

// A symbolic link inside the folder that points out of it is not inside.
func TestPermissionPathThroughALink(t *testing.T) {
	dir := t.TempDir()
	out := t.TempDir()
	if err := os.Symlink(out, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	rules := []vault.Permission{{Dir: dir, Tool: "write_file"}, {Dir: dir, Tool: "shell", Prefix: "make"}}
	for _, tt := range []struct {
		c    Consent
		want bool
	}{
		{Consent{Tool: "write_file", Args: map[string]any{"path": "sub/new.txt"}}, true},
		{Consent{Tool: "write_file", Args: map[string]any{"path": "link/new.txt"}}, false},
		{Consent{Tool: "write_file", Args: map[string]any{"path": filepath.Join(dir, "link", "a", "b")}}, false},
		{Consent{Tool: "shell", Args: map[string]any{"command": "make", "cwd": "sub"}}, true},
		{Consent{Tool: "shell", Args: map[string]any{"command": "make", "cwd": "link"}}, false},
	} {
		if _, got := PermissionAllows(rules, dir, tt.c); got != tt.want {
			t.Errorf("PermissionAllows(%v) = %v, want %v", tt.c.Args, got, tt.want)
		}
	}
}

// An argv built in Go ([]string, as a Lua tool or a script passes it) is
// read as the shell tool reads it: a rule covers it and a prefix is
// proposed for it, as for the []any a JSON decoder makes.
func TestPermissionGoArgv(t *testing.T) {
	dir := t.TempDir()
	rules := []vault.Permission{{Dir: dir, Tool: "shell", Prefix: "git status"}}
	c := Consent{Tool: "shell", Args: map[string]any{"argv": []string{"git", "status", "-s"}}}
	if _, ok := PermissionAllows(rules, dir, c); !ok {
		t.Error("a []string argv starting with the prefix is not covered")
	}
	if _, ok := PermissionAllows(rules, dir, Consent{Tool: "shell", Args: map[string]any{"argv": []string{"git", "status; id"}}}); ok {
		t.Error("a []string argv hiding a second command is covered")
	}
	if got, ok := SuggestPrefix(c); got != "git status" || !ok {
		t.Errorf("SuggestPrefix of a []string argv: %q, %v", got, ok)
	}
	if _, ok := SuggestPrefix(Consent{Tool: "shell", Args: map[string]any{"argv": []any{"git", 3.0}}}); ok {
		t.Error("an argv holding a number got a prefix")
	}
}
