package lua

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"tai/engine/sandbox"
	"tai/engine/tool"
)

// TestSandboxFieldThroughLua: an entry's sandbox setting comes out of
// tai.mcp.normalize in its written form, goes back into tai.mcp.expand as
// a Lua table unchanged (false, "required", a table, an empty list), a
// form the field does not have is refused, and tai.mcp.add stores it so
// that tai.mcp.list shows it per server.
func TestSandboxFieldThroughLua(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h, _, dir := modelHost(t, tool.Yolo)
	grant := t.TempDir()
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"boxed": map[string]any{"command": exe, "args": []string{"-test.run=^$"}, "env": map[string]string{"TAI_LUA_TEST_MCP": "1"},
			"sandbox": map[string]any{"read": []string{grant}, "network": false}},
		"open": map[string]any{"command": exe, "args": []string{"-test.run=^$"}, "env": map[string]string{"TAI_LUA_TEST_MCP": "1"}, "sandbox": false},
	}})
	got := mustRun(t, h, fmt.Sprintf(`
		local es = assert(tai.mcp.normalize(%q))
		local boxed, open = es[1], es[2]
		local back = tai.mcp.expand(boxed)
		local off = tai.mcp.expand{command = "srv", sandbox = false}
		local req = tai.mcp.expand{command = "srv", sandbox = "required"}
		local empty = tai.mcp.expand{command = "srv", sandbox = {read = {}, write = {"/srv/out"}}}
		local bad = pcall(tai.mcp.expand, {command = "srv", sandbox = "off"})
		local typo = pcall(tai.mcp.expand, {command = "srv", sandbox = {reed = {"/x"}}})
		assert(tai.mcp.add{source = %q})
		local list = assert(tai.mcp.list())
		return boxed.sandbox.read[1], boxed.sandbox.network, open.sandbox, back.sandbox.read[1], back.sandbox.network,
			off.sandbox, req.sandbox, empty.sandbox.write[1], bad, typo,
			list[1].name, list[1].sandbox, list[1].sandbox_off or false, list[2].name, list[2].sandbox, list[2].sandbox_off`, string(cfg), string(cfg)))
	// The folder tai runs in, where the server runs too, is readable.
	line := "reads: system, " + dir + ", " + grant + "; writes: its own state, a private temp folder; network: closed"
	if _, err := sandbox.Available(); err != nil {
		line = fmt.Sprintf("none on this system (%v): it runs with all of your rights", err)
	}
	want := []any{grant, false, false, grant, false, false, "required", "/srv/out", false, false,
		"boxed", line, false, "open", "off: it runs with all of your rights", true}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

// TestSandboxDenyList: tai.sandbox.deny shows the folders no sandbox
// grants and replaces them; an entry granting one on the list, or the
// vault's folder whatever the list says, is refused with a note naming
// it; a bad list is an error that leaves the old one.
func TestSandboxDenyList(t *testing.T) {
	h, _, _ := modelHost(t, tool.Interactive)
	secret := t.TempDir()
	store, err := h.Vault()
	if err != nil {
		t.Fatal(err)
	}
	vaultDir := filepath.Dir(store.Path())
	paste := func(path string) string {
		b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"srv": map[string]any{"command": "srv", "sandbox": map[string]any{"read": []string{path}}}}})
		return string(b)
	}
	got := mustRun(t, h, fmt.Sprintf(`
		local default = tai.sandbox.deny()
		local set = tai.sandbox.deny({%q, "~/.ssh"})
		local ok, err = pcall(tai.sandbox.deny, {"relative/path"})
		local after = tai.sandbox.deny()
		local function refusal(text)
			local es, notes = tai.mcp.normalize(text)
			for _, n in ipairs(notes) do if n.level == "refused" then return n.text end end
			return "taken: " .. #es
		end
		return default[1], #set, set[1], ok, err, #after,
			refusal(%q), refusal(%q), refusal(%q)`,
		secret, paste(secret+"/inner"), paste("~/.gnupg"), paste(vaultDir)))
	if got[0] != "~/.ssh" || fmt.Sprint(got[1]) != "2" || got[2] != secret || got[3] != false || fmt.Sprint(got[5]) != "2" {
		t.Fatalf("deny list: %q", got)
	}
	if !strings.Contains(got[4].(string), `tai.sandbox.deny[1] "relative/path" is not an absolute path`) {
		t.Errorf("bad list: %q", got[4])
	}
	if want := fmt.Sprintf(`sandbox.read[1] "%s/inner" is inside "%s", a folder on tai.sandbox.deny`, secret, secret); !strings.Contains(got[6].(string), want) {
		t.Errorf("a grant inside a listed folder: %q, want %q", got[6], want)
	}
	if got[7] != "taken: 1" {
		t.Errorf("~/.gnupg, taken off the list: %q", got[7])
	}
	if want := "is the vault's folder, which tai never grants a server"; !strings.Contains(got[8].(string), want) {
		t.Errorf("the vault's folder: %q, want %q", got[8], want)
	}
}

// TestSandboxAvailable: tai.sandbox.available answers the Landlock ABI
// version, or nil and why there is none (simulated with
// TAI_LANDLOCK_ABI=0).
func TestSandboxAvailable(t *testing.T) {
	h := newHost(t, Options{}, nil)
	t.Setenv(sandbox.ABIEnv, "0")
	got := mustRun(t, h, `return tai.sandbox.available()`)
	if len(got) != 2 || got[0] != nil || !strings.Contains(fmt.Sprint(got[1]), "$TAI_LANDLOCK_ABI=0 turns it off") {
		t.Fatalf("with the ABI at 0: %q", got)
	}
	abi, err := sandbox.Available()
	t.Setenv(sandbox.ABIEnv, "2")
	got = mustRun(t, h, `return tai.sandbox.available()`)
	if err == nil && (len(got) != 1 || fmt.Sprint(got[0]) != fmt.Sprint(min(abi, 2))) {
		t.Fatalf("with the ABI at most 2: %q", got)
	}
}

// TestConnectRequiredSandbox: tai.mcp.connect refuses an entry that
// requires the sandbox where none can run (simulated), saying why and
// what to do, before anything starts.
func TestConnectRequiredSandbox(t *testing.T) {
	t.Setenv(sandbox.ABIEnv, "0")
	h := newHost(t, Options{}, nil)
	mark := filepath.Join(t.TempDir(), "ran")
	got := mustRun(t, h, fmt.Sprintf(`return tai.mcp.connect{name = "strict", command = "sh", args = {"-c", "touch %s"}, sandbox = "required"}`, mark))
	if len(got) != 2 || got[0] != nil || !strings.Contains(fmt.Sprint(got[1]), `its entry says sandbox = "required" and this system has no Landlock`) ||
		!strings.Contains(fmt.Sprint(got[1]), `take "required" out of the entry's sandbox`) {
		t.Fatalf("connect: %q", got)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("the server ran")
	}
}

// TestSandboxRuntimeEnv: tai.sandbox.runtime_env shows the variables that
// change what a runtime runs and replaces them; a bad name is an error
// that leaves the old list.
func TestSandboxRuntimeEnv(t *testing.T) {
	h := newHost(t, Options{}, nil)
	got := mustRun(t, h, `
		local default = tai.sandbox.runtime_env()
		local has = false
		for _, n in ipairs(default) do if n == "NODE_OPTIONS" then has = true end end
		local set = tai.sandbox.runtime_env({"NODE_OPTIONS", "MY_*"})
		local ok, err = pcall(tai.sandbox.runtime_env, {"not a name"})
		local after = tai.sandbox.runtime_env()
		return has, #set, set[2], ok, err, #after`)
	if got[0] != true || fmt.Sprint(got[1]) != "2" || got[2] != "MY_*" || got[3] != false || fmt.Sprint(got[5]) != "2" {
		t.Fatalf("runtime_env: %q", got)
	}
	if !strings.Contains(fmt.Sprint(got[4]), "tai.sandbox.runtime_env[1] is not a variable name") {
		t.Errorf("bad name: %q", got[4])
	}
}
