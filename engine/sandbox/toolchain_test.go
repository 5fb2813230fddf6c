package sandbox

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// lockedBuffer is a buffer a process writes while a test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// mcpPython is a tiny stdio MCP server: it answers initialize and
// tools/list, and its one tool's name says whether it could read any of
// the files $PROBE lists (an ssh key, another project in the home folder).
const mcpPython = `import json, os, sys
def probe():
    for p in os.environ["PROBE"].split(":"):
        try:
            open(p).read()
            return "probe-read"
        except OSError:
            pass
    return "probe-refused"
name = probe()
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    if m["method"] == "initialize":
        r = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "py", "version": "1"}}
    else:
        r = {"tools": [{"name": name, "inputSchema": {"type": "object"}}]}
    print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}), flush=True)
`

// mcpNode is mcpPython in JavaScript.
const mcpNode = `const fs = require("fs");
let name = "probe-refused";
for (const p of process.env.PROBE.split(":")) { try { fs.readFileSync(p); name = "probe-read"; } catch (e) {} }
require("readline").createInterface({input: process.stdin}).on("line", (line) => {
  const m = JSON.parse(line);
  if (m.id === undefined) return;
  const r = m.method === "initialize"
    ? {protocolVersion: "2025-06-18", capabilities: {tools: {}}, serverInfo: {name: "js", version: "1"}}
    : {tools: [{name, inputSchema: {type: "object"}}]};
  process.stdout.write(JSON.stringify({jsonrpc: "2.0", id: m.id, result: r}) + "\n");
});
`

// layout writes files under root: each path is made with its folders,
// mode 0755 for those under a bin, shims or libexec folder.
func layout(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for path, text := range files {
		full := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if dir := filepath.Base(filepath.Dir(full)); dir == "bin" || dir == "shims" || dir == "libexec" {
			mode = 0o755
		}
		if err := os.WriteFile(full, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
	}
}

// symlink makes link point at target, with link's folders.
func symlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// install puts the real runtime found as name on the system's PATH at
// dest, a file of the install's own (a hard link, else a copy), as a
// manager installs it.
func install(t testing.TB, name, dest string) {
	t.Helper()
	prog, err := exec.LookPath("/usr/bin/" + name)
	if err != nil {
		if prog, err = exec.LookPath("/usr/local/bin/" + name); err != nil {
			t.Fatalf("%s is needed on this system for the toolchain layouts: %v", name, err)
		}
	}
	prog, _ = filepath.EvalSymlinks(prog)
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Link(prog, dest) == nil {
		return
	}
	in, err := os.Open(prog)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dest, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// pythonVersion is X.Y of the system's python3.
func pythonVersion(t testing.TB) string {
	out, err := exec.Command("/usr/bin/python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])").Output()
	if err != nil {
		t.Fatalf("python3 is needed on this system: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// serve starts command with args as tai starts a stdio server, under
// ForServer's policy for it in w's home with the PATH path, and asks it
// initialize and tools/list. It returns the tool's name (what its probe
// of w's ssh key and other project found), or fails with what the server
// printed.
func serve(t *testing.T, w *world, path, command string, args ...string) string {
	t.Helper()
	env := append([]string{"PATH=" + path}, w.env[:1]...)
	env = append(env, w.env[2:]...)
	p := ForServer(ServerSpec{Name: "tc", Command: command, Args: args, Cwd: w.project, Env: env, Vault: w.vault})
	cmd := exec.Command(command, args...)
	cmd.Env = append(env, "PROBE="+w.key+":"+w.other)
	cmd.Dir = w.project
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	in, _ := cmd.StdinPipe()
	outR, _ := cmd.StdoutPipe()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := StartServer(p)(cmd); err != nil {
		t.Fatalf("%s did not start: %v", command, err)
	}
	defer func() {
		in.Close()
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	}()
	lines := make(chan string, 2)
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	ask := func(id int, method string) map[string]any {
		req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": map[string]any{}})
		io.WriteString(in, string(req)+"\n")
		select {
		case line, ok := <-lines:
			var m struct{ Result map[string]any }
			if !ok || json.Unmarshal([]byte(line), &m) != nil || m.Result == nil {
				t.Fatalf("%s: no answer to %s (%q); policy %s; stderr:\n%s", command, method, line, p.Describe(), stderr.String())
			}
			return m.Result
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no answer to %s within 30 s; stderr:\n%s", command, method, stderr.String())
		}
		return nil
	}
	if r := ask(1, "initialize"); r["serverInfo"] == nil {
		t.Fatalf("%s: initialize answered %v", command, r)
	}
	tools, _ := ask(2, "tools/list")["tools"].([]any)
	if len(tools) != 1 {
		t.Fatalf("%s: tools/list answered %v", command, tools)
	}
	name, _ := tools[0].(map[string]any)["name"].(string)
	if d := p.Describe(); strings.Contains(d, "reads: everything") || strings.Contains(d, "reads: system, ~,") {
		t.Errorf("%s: the policy grants the home folder: %s", command, d)
	}
	return name
}

// pyenvLayout installs pyenv at root as its installer does, with the
// system's python3 as its one version, and a server in w's project; it
// returns the PATH, command and arguments that start the server.
func pyenvLayout(t testing.TB, w *world, root, pyv string) (string, string, []string) {
	t.Helper()
	sys := "/usr/local/bin:/usr/bin:/bin"
	layout(t, root, map[string]string{
		// The shim as pyenv rehash writes it.
		"shims/python3": `#!/usr/bin/env bash
set -e
[ -n "$PYENV_DEBUG" ] && set -x

program="${0##*/}"

export PYENV_ROOT="` + root + `"
SHIM_PATH=${0%/*}
if [[ $SHIM_PATH != "` + root + `/shims" ]]; then
  export _PYENV_SHIM_PATH="$SHIM_PATH"
fi
exec "` + root + `/libexec/pyenv" exec "$program" "$@"
`,
		// pyenv exec: the version file names the version run.
		"libexec/pyenv": `#!/usr/bin/env bash
set -e
[ "$1" = exec ] || { echo "pyenv: only exec here" >&2; exit 1; }
version="$(cat "$PYENV_ROOT/version")"
program="$2"; shift 2
export PATH="$PYENV_ROOT/versions/$version/bin:$PATH"
exec "$PYENV_ROOT/versions/$version/bin/$program" "$@"
`,
		"version": pyv + ".0\n",
	})
	install(t, "python3", filepath.Join(root, "versions", pyv+".0", "bin", "python3"))
	layout(t, w.project, map[string]string{"server.py": mcpPython})
	return filepath.Join(root, "shims") + ":" + sys, "python3", []string{filepath.Join(w.project, "server.py")}
}

// Servers started through the version managers and per-user runtimes
// people use start under the default policy, each from its manager's
// documented layout with a real runtime installed in it and shims written
// as the manager writes them, and still cannot read ~/.ssh.
func TestToolchainLayouts(t *testing.T) {
	needLandlock(t)
	sys := "/usr/local/bin:/usr/bin:/bin"
	pyv := pythonVersion(t)
	for _, c := range []struct {
		name  string
		build func(t *testing.T, w *world) (path, command string, args []string)
	}{
		{"pyenv", func(t *testing.T, w *world) (string, string, []string) {
			return pyenvLayout(t, w, filepath.Join(w.home, ".pyenv"), pyv)
		}},
		// PYENV_ROOT elsewhere, not in tai's environment: the shim's
		// layout says it is pyenv's.
		{"pyenv-elsewhere", func(t *testing.T, w *world) (string, string, []string) {
			return pyenvLayout(t, w, filepath.Join(w.home, "tools", "pyenv"), pyv)
		}},
		{"asdf", func(t *testing.T, w *world) (string, string, []string) {
			root := filepath.Join(w.home, ".asdf")
			layout(t, root, map[string]string{
				"shims/python3": `#!/usr/bin/env bash
# asdf-plugin: python ` + pyv + `.0
exec ` + root + `/bin/asdf exec "python3" "$@" # asdf_allow: ' asdf '
`,
				// asdf exec: ~/.tool-versions names the version run.
				"bin/asdf": `#!/usr/bin/env bash
set -e
version="$(sed -n 's/^python //p' "$HOME/.tool-versions")"
program="$2"; shift 2
exec "` + root + `/installs/python/$version/bin/$program" "$@"
`,
			})
			layout(t, w.home, map[string]string{".tool-versions": "python " + pyv + ".0\n"})
			install(t, "python3", filepath.Join(root, "installs", "python", pyv+".0", "bin", "python3"))
			layout(t, w.project, map[string]string{"server.py": mcpPython})
			return filepath.Join(root, "shims") + ":" + sys, "python3", []string{filepath.Join(w.project, "server.py")}
		}},
		{"volta", func(t *testing.T, w *world) (string, string, []string) {
			root := filepath.Join(w.home, ".volta")
			layout(t, root, map[string]string{
				// volta-shim reads the default platform, then runs the
				// tool from its image.
				"bin/volta-shim": `#!/bin/sh
v=$(sed -n 's/.*"runtime": *"\([^"]*\)".*/\1/p' "$HOME/.volta/tools/user/platform.json")
exec "$HOME/.volta/tools/image/node/$v/bin/${0##*/}" "$@"
`,
				"tools/user/platform.json": `{"node": {"runtime": "20.0.0", "npm": null}, "yarn": null}`,
			})
			symlink(t, "volta-shim", filepath.Join(root, "bin", "node"))
			install(t, "node", filepath.Join(root, "tools", "image", "node", "20.0.0", "bin", "node"))
			layout(t, w.project, map[string]string{"server.js": mcpNode})
			return filepath.Join(root, "bin") + ":" + sys, "node", []string{filepath.Join(w.project, "server.js")}
		}},
		{"mise", func(t *testing.T, w *world) (string, string, []string) {
			// mise is one binary; its shims are links to it, and it runs
			// what its configuration names from its installs.
			mise := filepath.Join(w.home, ".local", "bin", "mise")
			layout(t, w.home, map[string]string{
				".local/bin/mise": `#!/bin/sh
v=$(sed -n 's/^node *= *"\(.*\)"/\1/p' "$HOME/.config/mise/config.toml")
exec "$HOME/.local/share/mise/installs/node/$v/bin/${0##*/}" "$@"
`,
				".config/mise/config.toml": "[tools]\nnode = \"20\"\n",
			})
			symlink(t, mise, filepath.Join(w.home, ".local", "share", "mise", "shims", "node"))
			install(t, "node", filepath.Join(w.home, ".local", "share", "mise", "installs", "node", "20", "bin", "node"))
			layout(t, w.project, map[string]string{"server.js": mcpNode})
			return filepath.Join(w.home, ".local", "share", "mise", "shims") + ":" + sys, "node", []string{filepath.Join(w.project, "server.js")}
		}},
		{"fnm", func(t *testing.T, w *world) (string, string, []string) {
			// PATH holds a per-shell link to the default alias, a link
			// into node-versions.
			fnm := filepath.Join(w.home, ".local", "share", "fnm")
			install(t, "node", filepath.Join(fnm, "node-versions", "v20.0.0", "installation", "bin", "node"))
			symlink(t, filepath.Join(fnm, "node-versions", "v20.0.0", "installation"), filepath.Join(fnm, "aliases", "default"))
			shell := filepath.Join(w.home, ".local", "state", "fnm_multishells", "4242_1700000000000")
			symlink(t, filepath.Join(fnm, "aliases", "default"), shell)
			layout(t, w.project, map[string]string{"server.js": mcpNode})
			return filepath.Join(shell, "bin") + ":" + sys, "node", []string{filepath.Join(w.project, "server.js")}
		}},
		{"nvm", func(t *testing.T, w *world) (string, string, []string) {
			bin := filepath.Join(w.home, ".nvm", "versions", "node", "v20.0.0", "bin")
			install(t, "node", filepath.Join(bin, "node"))
			layout(t, w.project, map[string]string{"server.js": mcpNode})
			return bin + ":" + sys, "node", []string{filepath.Join(w.project, "server.js")}
		}},
		{"local-bin", func(t *testing.T, w *world) (string, string, []string) {
			// pip install --user: the script in ~/.local/bin, its package
			// in ~/.local/lib/pythonX.Y/site-packages.
			layout(t, w.home, map[string]string{
				".local/bin/mcp-hello": "#!/usr/bin/python3\nfrom hello_mcp import main\nmain()\n",
				".local/lib/python" + pyv + "/site-packages/hello_mcp/__init__.py": "def main():\n" +
					"    exec(compile(open(__file__.replace('__init__.py', 'server.py')).read(), 'server.py', 'exec'), {})\n",
				".local/lib/python" + pyv + "/site-packages/hello_mcp/server.py": mcpPython,
			})
			return filepath.Join(w.home, ".local", "bin") + ":" + sys, "mcp-hello", nil
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			path, command, args := c.build(t, w)
			if got := serve(t, w, path, command, args...); got != "probe-refused" {
				t.Errorf("the server read the ssh key or another project: %s", got)
			}
		})
	}
}

// uvx runs the Pythons uv already installed, read-only, rather than
// installing one more into the server's own cache; where uv installed
// none, its own cache holds the one it installs.
func TestUvxUsesInstalledPythons(t *testing.T) {
	w := newWorld(t)
	pythons := filepath.Join(w.home, ".local", "share", "uv", "python")
	if err := os.MkdirAll(filepath.Join(pythons, "cpython-3.12.8-linux-x86_64-gnu", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := ForServer(ServerSpec{Name: "git", Command: "uvx", Args: []string{"mcp-server-git"}, Env: w.env, Vault: w.vault})
	if wr, rd := granted(p, pythons); wr || !rd {
		t.Errorf("uv's Pythons: write %v, read %v; want read only: %+v %+v", wr, rd, p.Read, p.Write)
	}
	if slices.ContainsFunc(p.Env, func(v string) bool { return strings.HasPrefix(v, "UV_PYTHON_INSTALL_DIR=") }) {
		t.Errorf("the server installs Pythons of its own: %q", p.Env)
	}
	if got := p.Describe(); !strings.Contains(got, "reads: system, ~/.local/share/uv/python;") {
		t.Errorf("Describe() = %s", got)
	}
}

// Where a toolchain lives is taken from tai's own environment: an entry
// whose env says PYENV_ROOT is the home folder gets no more than its
// runtime; and a toolchain's grant is never the home folder.
func TestToolchainRootsComeFromTai(t *testing.T) {
	w := newWorld(t)
	shims := filepath.Join(w.home, ".pyenv", "shims")
	layout(t, shims, map[string]string{"python3": "#!/bin/sh\nexec " + w.home + "/.pyenv/libexec/pyenv exec python3 \"$@\"\n"})
	env := append([]string{"PATH=" + shims + ":/usr/bin:/bin"}, w.env[0], w.env[2])
	for _, c := range []struct {
		name string
		env  []string
		want string
	}{
		{"as installed", env, "reads: system, ~/.pyenv;"},
		{"entry moves it", append(append([]string(nil), env...), "PYENV_ROOT="+w.home), "reads: system, ~/.pyenv;"},
	} {
		p := ForServer(ServerSpec{Name: "py", Command: "python3", Env: c.env, Base: env, Vault: w.vault})
		if got := p.Describe(); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: Describe() = %s", c.name, got)
		}
	}
	base := append(append([]string(nil), env...), "PYENV_ROOT="+w.home)
	p := ForServer(ServerSpec{Name: "py", Command: "python3", Env: base, Vault: w.vault})
	if _, rd := granted(p, w.key); rd || slices.ContainsFunc(p.Read, func(g Path) bool { return g.Path == w.home }) {
		t.Errorf("PYENV_ROOT=~ grants the home folder: %+v", p.Read)
	}
}

// A script given as an argument is read with its project: the nearest
// folder above it with a project's marker (node_modules without a
// package.json, a .venv, a .git), else its own folder; never the home
// folder, /, a shared temporary folder, nor a folder holding tai's
// configuration or the vault.
func TestScriptIsReadWithItsProject(t *testing.T) {
	w := newWorld(t)
	root := t.TempDir()
	layout(t, root, map[string]string{
		"js/node_modules/dep/index.js": "",
		"js/dist/index.js":             "",
		"py/.venv/pyvenv.cfg":          "",
		"py/src/app/server.py":         "",
		"git/.git/HEAD":                "",
		"git/tools/serve.py":           "",
		"bare/tool/run.py":             "",
	})
	layout(t, w.home, map[string]string{
		"loose.py":               "",
		"scripts/run.py":         "",
		".config/tai/serve.py":   "",
		".config/other/serve.py": "",
	})
	config := filepath.Join(w.home, ".config", "tai")
	never := []string{config, filepath.Dir(w.vault)}
	for _, c := range []struct{ file, want string }{
		{"js/dist/index.js", "js"},
		{"js/node_modules/dep/index.js", "js/node_modules"},
		{"py/src/app/server.py", "py"},
		{"git/tools/serve.py", "git"},
		{"bare/tool/run.py", "bare/tool"},
	} {
		if got := scriptRoot(filepath.Join(root, c.file), w.home, never); got != filepath.Join(root, c.want) {
			t.Errorf("%s: root %s, want %s", c.file, got, filepath.Join(root, c.want))
		}
	}
	for _, c := range []struct{ file, want string }{
		{"loose.py", "loose.py"},
		{"scripts/run.py", "scripts"},
		{".config/tai/serve.py", ".config/tai/serve.py"},
		{".config/other/serve.py", ".config/other"},
	} {
		if got := scriptRoot(filepath.Join(w.home, c.file), w.home, never); got != filepath.Join(w.home, c.want) {
			t.Errorf("%s: root %s, want %s", c.file, got, filepath.Join(w.home, c.want))
		}
	}
	if got := scriptRoot("/tmp/x.py", w.home, never); got != "/tmp/x.py" {
		t.Errorf("/tmp/x.py: root %s", got)
	}
}

// A script given as an argument runs with its project: node finds the
// dependencies beside it in node_modules with no package.json, and a
// Python script reads a file beside it, each started from another folder;
// the folder above the project stays out of reach.
func TestScriptRunsWithItsProject(t *testing.T) {
	needLandlock(t)
	w := newWorld(t)
	root := t.TempDir()
	layout(t, root, map[string]string{
		"js/dist/index.js":             "console.log(require('dep').ok)\n",
		"js/node_modules/dep/index.js": "module.exports = {ok: 'DEP-LOADED'}\n",
		"py/server.py":                 "import os\nprint(open(os.path.join(os.path.dirname(__file__), 'data.txt')).read())\n",
		"py/data.txt":                  "BESIDE-READ\n",
		"above.txt":                    "ABOVE\n",
	})
	for _, c := range []struct{ command, script, want string }{
		{"node", filepath.Join(root, "js", "dist", "index.js"), "DEP-LOADED"},
		{"python3", filepath.Join(root, "py", "server.py"), "BESIDE-READ"},
	} {
		p := ForServer(ServerSpec{Name: "s", Command: c.command, Args: []string{c.script}, Dir: w.project, Env: w.env, Vault: w.vault})
		if _, rd := granted(p, filepath.Join(root, "above.txt")); rd {
			t.Errorf("%s: the folder above the project is granted: %s", c.command, p.Describe())
		}
		_, out := run(t, []string{c.command, c.script}, w.project, w.env, &p)
		if !strings.Contains(out, c.want) {
			t.Errorf("%s %s: %s missing (%s):\n%s", c.command, c.script, c.want, p.Describe(), out)
		}
	}
}

// Each toolchain tai knows grants its whole install, and no more, to a
// program that comes from it: the folders it needs are readable, the
// files beside them in the home folder are not (cargo's credentials
// among them).
func TestToolchainGrants(t *testing.T) {
	for _, c := range []struct {
		name     string
		files    []string // made in the home folder; the first is the command
		link     [2]string
		readable []string
		not      []string
	}{
		{name: "rbenv", files: []string{".rbenv/shims/ruby", ".rbenv/libexec/rbenv", ".rbenv/versions/3.3.0/bin/ruby"},
			readable: []string{".rbenv/versions/3.3.0/bin/ruby", ".rbenv/libexec/rbenv"}},
		{name: "nodenv", files: []string{".nodenv/shims/node", ".nodenv/libexec/nodenv", ".nodenv/versions/20.0.0/bin/node"},
			readable: []string{".nodenv/versions/20.0.0/bin/node"}},
		{name: "sdkman", files: []string{".sdkman/candidates/java/21.0.1-tem/bin/java", ".sdkman/etc/config"},
			link: [2]string{"21.0.1-tem", ".sdkman/candidates/java/current"}, readable: []string{".sdkman/candidates/java/21.0.1-tem/lib"}},
		{name: "bun", files: []string{".bun/bin/bun", ".bun/install/global/node_modules/x/index.js"},
			readable: []string{".bun/install/global/node_modules/x/index.js"}},
		{name: "deno", files: []string{".deno/bin/deno"}, readable: []string{".deno/bin/deno"}},
		{name: "cargo", files: []string{".cargo/bin/cargo", ".rustup/toolchains/stable/bin/cargo", ".rustup/settings.toml", ".cargo/credentials.toml"},
			readable: []string{".rustup/toolchains/stable/bin/cargo", ".rustup/settings.toml"}, not: []string{".cargo/credentials.toml"}},
		{name: "go", files: []string{"go/bin/go1.22.0", "sdk/go1.22.0/bin/go", "go/pkg/mod/x/y.go"},
			readable: []string{"sdk/go1.22.0/bin/go"}, not: []string{"go/pkg/mod/x/y.go"}},
		{name: "uv tool", files: []string{".local/share/uv/tools/srv/bin/srv", ".local/share/uv/python/cpython-3.12/bin/python3", ".local/share/uv/credentials/x"},
			readable: []string{".local/share/uv/tools/srv/lib", ".local/share/uv/python/cpython-3.12/bin/python3"}, not: []string{".local/share/uv/credentials/x"}},
		{name: "linuxbrew in home", files: []string{".linuxbrew/bin/node", ".linuxbrew/lib/libicu.so"},
			readable: []string{".linuxbrew/lib/libicu.so"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			for _, f := range c.files {
				layout(t, w.home, map[string]string{f: "#!/bin/sh\n"})
				os.Chmod(filepath.Join(w.home, f), 0o755)
			}
			if c.link[1] != "" {
				symlink(t, c.link[0], filepath.Join(w.home, c.link[1]))
			}
			command := filepath.Join(w.home, c.files[0])
			if c.link[1] != "" {
				command = filepath.Join(w.home, c.link[1], "bin", "java")
			}
			p := ForServer(ServerSpec{Name: "s", Command: command, Env: w.env, Vault: w.vault})
			for _, r := range c.readable {
				if _, rd := granted(p, filepath.Join(w.home, r)); !rd {
					t.Errorf("%s is not readable: %s", r, p.Describe())
				}
			}
			for _, n := range append(c.not, "other/secret.txt", ".bashrc") {
				if _, rd := granted(p, filepath.Join(w.home, n)); rd {
					t.Errorf("%s is readable: %s", n, p.Describe())
				}
			}
		})
	}
}
