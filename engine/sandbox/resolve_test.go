package sandbox

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRelativeGrantsResolvedWhereTheServerRuns: an entry whose args hold
// ".", "./x" or "../..", or whose cwd is ".", is granted those folders
// as seen from where the server runs (its cwd, else tai's working
// folder), never from the keeper's "/": none of them can read an ssh
// key or the vault, nor write tai's init.lua, and the consent line names
// absolute folders.
func TestRelativeGrantsResolvedWhereTheServerRuns(t *testing.T) {
	needLandlock(t)
	w := newWorld(t)
	initLua := filepath.Join(w.home, ".config", "tai", "init.lua")
	os.MkdirAll(filepath.Dir(initLua), 0o700)
	os.WriteFile(initLua, []byte("-- init\n"), 0o600)
	os.Mkdir(filepath.Join(w.project, "x"), 0o700)
	script := `
cat "$KEY" && echo READ-KEY
cat "$VAULT" && echo READ-VAULT
echo "print('pwned')" >> "$INIT" && echo WROTE-INIT
echo x > "$PROJECT/planted" && echo WROTE-PROJECT
true
`
	for _, c := range []struct {
		name, cwd    string
		args         []string
		writeProject bool
	}{
		{"dot", "", []string{"-c", script, "."}, true},
		{"dot-x", "", []string{"-c", script, "./x"}, false},
		{"up-up", "", []string{"-c", script, "../.."}, true},
		{"cwd-dot", ".", []string{"-c", script}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(filepath.Join(w.project, "planted"))
			p := ForServer(ServerSpec{Name: c.name, Command: "sh", Args: c.args, Cwd: c.cwd, Dir: w.project, Env: w.env, Vault: w.vault})
			for _, g := range append(append([]Path(nil), p.Read...), p.Write...) {
				if !filepath.IsAbs(g.Path) {
					t.Errorf("a relative grant: %+v", g)
				}
			}
			if strings.Contains(p.Describe(), " .") || strings.Contains(p.Describe(), "everything") {
				t.Errorf("the consent line: %s", p.Describe())
			}
			// As the stdio transport starts it: the entry's cwd as written.
			cmd := exec.Command("sh", c.args...)
			cmd.Dir = c.cwd
			cmd.Env = append(append([]string(nil), w.env...), "KEY="+w.key, "VAULT="+w.vault, "INIT="+initLua, "PROJECT="+w.project)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
			if err := StartServer(p)(cmd); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				t.Fatal("the server did not end within 30 s")
			}
			for _, bad := range []string{"READ-KEY", "READ-VAULT", "WROTE-INIT", "SECRET"} {
				if strings.Contains(out.String(), bad) {
					t.Errorf("%s (%s):\n%s", bad, p.Describe(), out.String())
				}
			}
			if got := strings.Contains(out.String(), "WROTE-PROJECT"); got != c.writeProject {
				t.Errorf("wrote the project: %v, want %v (%s):\n%s", got, c.writeProject, p.Describe(), out.String())
			}
			if b, _ := os.ReadFile(initLua); string(b) != "-- init\n" {
				t.Errorf("init.lua was changed: %q", b)
			}
		})
	}
}

// TestBroadGrantsWarned: a grant of the home folder, of /, or of a folder
// holding tai's configuration is warned about; a project's is not.
func TestBroadGrantsWarned(t *testing.T) {
	w := newWorld(t)
	for _, c := range []struct {
		write []string
		want  string
	}{
		{[]string{"/"}, "/ is granted"},
		{[]string{"~"}, "~ is granted: the server reaches your whole home folder"},
		{[]string{".."}, " is granted: the server reaches your whole home folder"},
		{[]string{"~/.config"}, "~/.config holds tai's configuration (~/.config/tai)"},
		{[]string{"~/project"}, ""},
	} {
		p := ForServer(ServerSpec{Name: "fs", Command: "sh", Write: c.write, Dir: w.project, Env: w.env, Vault: w.vault})
		notes := strings.Join(p.Notes, "\n")
		if c.want == "" && notes != "" || !strings.Contains(notes, c.want) {
			t.Errorf("%v: notes %q, want %q", c.write, notes, c.want)
		}
	}
}

// TestResolve: relative paths from the folder given, ~ from home,
// symbolic links followed as far as the path exists, and nothing for a
// path that stays relative.
func TestResolve(t *testing.T) {
	root := t.TempDir()
	os.Mkdir(filepath.Join(root, "real"), 0o700)
	os.Symlink(filepath.Join(root, "real"), filepath.Join(root, "link"))
	for _, c := range []struct{ path, dir, want string }{
		{".", root, root},
		{"./link/new", root, filepath.Join(root, "real", "new")},
		{"../..", filepath.Join(root, "real"), filepath.Dir(root)},
		{"~/link", "", filepath.Join(root, "real")},
		{".", "", ""},
		{"x", "rel", ""},
		{"", root, ""},
	} {
		if got := Resolve(c.path, root, c.dir); got != c.want {
			t.Errorf("Resolve(%q, %q) = %q, want %q", c.path, c.dir, got, c.want)
		}
	}
}

// TestVaultFolderNotListed: a sandboxed shell command can list neither
// the vault's folder nor, so, a folder on the way to it; another denied
// folder's names stay listable (never its files), and the project and
// folders beside the way stay listable.
func TestVaultFolderNotListed(t *testing.T) {
	needLandlock(t)
	w := newWorld(t)
	p := ForShell(ShellSpec{Dir: w.project, Env: w.env, Vault: w.vault})
	script := `
ls "$(dirname "$VAULT")" && echo LISTED-VAULT
ls "$HOME/.local/share" && echo LISTED-SHARE
ls . >/dev/null && echo LISTED-PROJECT-OK
ls /usr >/dev/null && echo LISTED-USR-OK
true
`
	_, out := run(t, []string{"sh", "-c", script}, w.project, append(w.env, "VAULT="+w.vault), &p)
	for _, bad := range []string{"LISTED-VAULT", "LISTED-SHARE", "vault.db"} {
		if strings.Contains(out, bad) {
			t.Errorf("%s:\n%s", bad, out)
		}
	}
	for _, want := range []string{"LISTED-PROJECT-OK", "LISTED-USR-OK"} {
		if !strings.Contains(out, want) {
			t.Errorf("%s missing:\n%s", want, out)
		}
	}
}

// TestListingRefusalExplained: ls of a folder on the way to the vault's
// folder is explained as such, not as a write.
func TestListingRefusalExplained(t *testing.T) {
	w := newWorld(t)
	p := ForShell(ShellSpec{Dir: w.project, Env: w.env, Vault: w.vault})
	ds := p.Explain("ls: cannot open directory '"+w.home+"': Permission denied", w.project)
	if len(ds) != 1 || !ds[0].Listing {
		t.Fatalf("denials: %+v", ds)
	}
	if h := p.Hint(ds, ""); !strings.Contains(h, "listing ~: commands may not list the folders on the way to the vault's folder") {
		t.Errorf("hint: %s", h)
	}
}
