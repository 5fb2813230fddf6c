package config

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"tai/mcp"
)

// sandboxOf normalizes one canonical stdio entry whose sandbox field is
// the JSON sb, with home as ~ and the vault's folder denied beside the
// default list, and returns the entry (nil when refused) and the notes.
func sandboxOf(t *testing.T, home, vaultDir, sb string) (*mcp.Entry, []Note) {
	t.Helper()
	text := `{"srv": {"transport": "stdio", "command": "srv", "sandbox": ` + sb + `}}`
	entries, notes, err := Normalize(text, &Options{Home: home, Denied: deniedFor(vaultDir)})
	if err != nil {
		t.Fatalf("%s: %v", sb, err)
	}
	if len(entries) == 0 {
		return nil, notes
	}
	return &entries[0], notes
}

func deniedFor(vaultDir string) []Denied {
	d := []Denied{{Path: vaultDir, Why: "the vault's folder"}}
	for _, p := range []string{"~/.ssh", "~/.gnupg", "~/.aws"} {
		d = append(d, Denied{Path: p, Why: DenyListed})
	}
	return d
}

// TestNormalizeSandboxForms: each form the field takes is read into the
// entry, grants cleaned (.. resolved, ~ kept), unknown keys noted.
func TestNormalizeSandboxForms(t *testing.T) {
	home := t.TempDir()
	vaultDir := filepath.Join(home, ".local", "share", "tai")
	tests := []struct {
		name, sb string
		want     *mcp.Sandbox
		note     string // in a note, "" for none
	}{
		{name: "off", sb: `false`, want: &mcp.Sandbox{Off: true}},
		{name: "required", sb: `"required"`, want: &mcp.Sandbox{Required: true}},
		{name: "required in capitals", sb: `"Required"`, want: &mcp.Sandbox{Required: true}},
		{name: "true is the default", sb: `true`, want: nil, note: "sandbox = true is the default"},
		{name: "table", sb: `{"read": ["~/docs", "/srv/data/../other"], "write": ["~/out/"], "network": false, "required": true}`,
			want: &mcp.Sandbox{Read: []string{"~/docs", "/srv/other"}, Write: []string{"~/out"}, NoNetwork: true, Required: true}},
		{name: "home's parent written from ~", sb: `{"read": ["~/../shared"]}`, want: &mcp.Sandbox{Read: []string{filepath.Join(filepath.Dir(home), "shared")}}},
		{name: "unknown key", sb: `{"read": ["/srv"], "exec": ["/bin"]}`, want: &mcp.Sandbox{Read: []string{"/srv"}},
			note: `sandbox field "exec" is not one tai knows (it knows read, write, network, required); it is ignored`},
		{name: "empty table", sb: `{}`, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, notes := sandboxOf(t, home, vaultDir, tt.sb)
			if e == nil {
				t.Fatalf("refused: %+v", notes)
			}
			if !reflect.DeepEqual(e.Sandbox, tt.want) {
				t.Fatalf("sandbox = %+v, want %+v", e.Sandbox, tt.want)
			}
			if tt.note != "" && !slicesContainsText(notes, tt.note) {
				t.Fatalf("no note %q in %+v", tt.note, notes)
			}
			if tt.note == "" && len(notes) > 0 {
				t.Fatalf("notes = %+v", notes)
			}
		})
	}
}

// TestNormalizeSandboxRefused: a grant that reaches the vault's folder or
// a folder on the deny list, however written (the folder itself, one
// holding it such as / or ~, .., a symbolic link on either side), a path
// that is not absolute or holds what does not show, a wrong kind and a
// huge list each refuse the entry with a note naming what is wrong.
func TestNormalizeSandboxRefused(t *testing.T) {
	home := t.TempDir()
	vaultDir := filepath.Join(home, ".local", "share", "tai")
	if err := os.MkdirAll(vaultDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "innocent")
	if err := os.Symlink(vaultDir, link); err != nil {
		t.Fatal(err)
	}
	sshLink := filepath.Join(t.TempDir(), "keys")
	if err := os.Symlink(filepath.Join(home, ".ssh"), sshLink); err != nil {
		t.Fatal(err)
	}
	many := make([]string, mcp.MaxSandboxGrants+1)
	for i := range many {
		many[i] = fmt.Sprintf(`"/srv/%d"`, i)
	}
	tests := []struct {
		name, sb string
		want     string
	}{
		{name: "the vault's folder", sb: `{"read": [` + q(vaultDir) + `]}`, want: `sandbox.read[1] ` + q(vaultDir) + ` is the vault's folder, which tai never grants a server`},
		{name: "inside the vault's folder", sb: `{"write": [` + q(vaultDir+"/x") + `]}`, want: `is inside ` + q(vaultDir) + `, the vault's folder, which`},
		{name: "vault through ..", sb: `{"read": ["~/docs/../.local/share"]}`, want: `sandbox.read[1] "~/docs/../.local/share" holds ` + q(vaultDir) + `, the vault's folder, which`},
		{name: "vault through a symbolic link", sb: `{"read": [` + q(link+"/sub") + `]}`, want: `(through a symbolic link: it is ` + q(vaultDir+"/sub") + `)`},
		{name: "ssh", sb: `{"read": ["~/.ssh"]}`, want: `sandbox.read[1] "~/.ssh" is a folder on tai.sandbox.deny, which tai never grants a server: grant a folder that neither holds it nor is inside it`},
		{name: "ssh through a symbolic link", sb: `{"read": [` + q(sshLink) + `]}`, want: `is "~/.ssh", a folder on tai.sandbox.deny, which tai never grants a server (through a symbolic link`},
		{name: "home", sb: `{"read": ["/srv", "~"]}`, want: `sandbox.read[2] "~" holds`},
		{name: "root", sb: `{"write": ["/"]}`, want: `sandbox.write[1] "/" holds`},
		{name: "relative", sb: `{"read": ["docs"]}`, want: `"docs" is not an absolute path`},
		{name: "newline", sb: `{"read": ["/tmp/a\nb"]}`, want: `sandbox.read[1] "/tmp/a\nb" holds a line break, escape or invisible character`},
		{name: "escape", sb: `{"read": ["/tmp/\u001b[31m"]}`, want: `"/tmp/\x1b[31m" holds a line break, escape or invisible character`},
		{name: "huge list", sb: `{"read": [` + strings.Join(many, ",") + `]}`, want: "sandbox grants 65 folders, more than the 64 a consent screen shows"},
		{name: "a word", sb: `"off"`, want: `sandbox is the text "off": write sandbox = false to turn it off`},
		{name: "a number", sb: `0`, want: `sandbox is a number: write sandbox = false`},
		{name: "read not a list", sb: `{"read": "/srv"}`, want: "sandbox.read is a string; it must be a list of strings"},
		{name: "network not a boolean", sb: `{"network": "off"}`, want: "sandbox.network is a string; it must be true or false"},
		{name: "off and more", sb: `{"required": false, "read": []}`, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, notes := sandboxOf(t, home, vaultDir, tt.sb)
			if tt.want == "" {
				if e == nil {
					t.Fatalf("refused: %+v", notes)
				}
				return
			}
			if e != nil {
				t.Fatalf("taken with sandbox %+v; notes %+v", e.Sandbox, notes)
			}
			var refusal string
			for _, n := range notes {
				if n.Level == LevelRefused {
					refusal = n.Text
				}
			}
			if !strings.Contains(refusal, tt.want) {
				t.Fatalf("refusal %q, want %q in it", refusal, tt.want)
			}
		})
	}
}

func q(s string) string { return fmt.Sprintf("%q", s) }

// TestNormalizeSandboxTOML: the field reads the same from TOML, and an
// http entry's sandbox is dropped with a note.
func TestNormalizeSandboxTOML(t *testing.T) {
	text := `
[fs]
transport = "stdio"
command = "srv"
sandbox = { read = ["/srv/docs"], network = false }

[off]
transport = "stdio"
command = "srv"
sandbox = false

[web]
transport = "http"
url = "https://mcp.example.net/mcp"
sandbox = "required"
`
	entries, notes, err := Normalize(text, &Options{Home: t.TempDir(), Denied: deniedFor("/nonexistent/vault")})
	if err != nil || len(entries) != 3 {
		t.Fatalf("entries = %+v, notes = %+v, err = %v", entries, notes, err)
	}
	if want := (&mcp.Sandbox{Read: []string{"/srv/docs"}, NoNetwork: true}); !reflect.DeepEqual(entries[0].Sandbox, want) {
		t.Errorf("fs sandbox = %+v", entries[0].Sandbox)
	}
	if !entries[1].Sandbox.IsOff() {
		t.Errorf("off sandbox = %+v", entries[1].Sandbox)
	}
	if entries[2].Sandbox != nil || !slicesContainsText(notes, "sandbox is for stdio servers, which tai starts; an http server runs elsewhere, so it is ignored") {
		t.Errorf("web sandbox = %+v, notes %+v", entries[2].Sandbox, notes)
	}
}
