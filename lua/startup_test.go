package lua

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"tai/engine/llm/llmtest"
	"tai/engine/tool"
	"tai/mcp"
)

// Off a terminal, a slow launcher's start is reported when it is first
// told and every startupEvery after, one safe line each, and nothing more
// once it is over.
func TestStartupLineOffTerminal(t *testing.T) {
	var out bytes.Buffer
	show := startupLine(&out, func(l string) { fmt.Fprintln(&out, l) })
	l := mcp.Launch{Launcher: "npx", Package: "@modelcontextprotocol/server-memory"}
	for s := 2; s <= 23; s++ {
		show(mcp.StartupNotice{Server: "memory", Launch: l, Elapsed: time.Duration(s) * time.Second, Line: "npm http fetch \x1b[2J200"})
	}
	show(mcp.StartupNotice{Server: "memory", Launch: l, Done: true})
	want := "tai: memory: npx is installing @modelcontextprotocol/server-memory… 2 s (npm http fetch \\x1b[2J200)\n" +
		"tai: memory: npx is installing @modelcontextprotocol/server-memory… 12 s (npm http fetch \\x1b[2J200)\n" +
		"tai: memory: npx is installing @modelcontextprotocol/server-memory… 22 s (npm http fetch \\x1b[2J200)\n"
	if got := out.String(); got != want {
		t.Errorf("stderr reads\n%q\nwant\n%q", got, want)
	}
}

// On a terminal the report is one line redrawn in place, cut to the
// terminal's width, and cleared when the start is over.
func TestStartupLineOnTerminal(t *testing.T) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	defer m.Close()
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetWinsize(int(s.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 40}); err != nil {
		t.Fatal(err)
	}
	show := startupLine(s, func(string) { t.Error("a line was said off the terminal") })
	l := mcp.Launch{Launcher: "npx", Package: "pkg"}
	show(mcp.StartupNotice{Server: "memory", Launch: l, Elapsed: 2 * time.Second})
	show(mcp.StartupNotice{Server: "memory", Launch: l, Elapsed: 3 * time.Second, Line: "npm http fetch GET 200 https://registry.npmjs.org/pkg"})
	show(mcp.StartupNotice{Server: "memory", Launch: l, Done: true})
	want := "\r\x1b[Kmemory: npx is installing pkg… 2 s" +
		"\r\x1b[Kmemory: npx is installing pkg… 3 s (np…" + // 39 columns
		"\r\x1b[K"
	// With the other end closed, the master reads what was written, then
	// fails (EIO): the read ends.
	s.Close()
	var got []byte
	buf := make([]byte, 4096)
	for {
		k, err := m.Read(buf)
		got = append(got, buf[:k]...)
		if err != nil {
			break
		}
	}
	if string(got) != want {
		t.Errorf("the terminal got\n%q\nwant\n%q", got, want)
	}
}

// During a chat turn, a bridged call that waits for a server's launcher
// shows the launcher's line in the turn's running spinner (on_running's
// status) rather than a line of its own that would fight the spinner.
func TestChatSpinnerShowsLauncherStart(t *testing.T) {
	// The stand-in npx, the server it runs and its gate sit in one folder.
	bin, server := serverBin(t)
	gate := filepath.Join(bin, "gate")
	if err := unix.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf("#!/bin/sh\nread line < %q\nTAI_LUA_TEST_MCP=1 exec %q -test.run=^$\n", gate, server)
	if err := os.WriteFile(filepath.Join(bin, "npx"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	h, _, _ := modelHost(t, tool.Yolo, llmtest.Calls(llmtest.Call("mcp_memory_echo", `{"text":"hi"}`)), llmtest.Say("done"))
	// The add's own start goes through the gate at once.
	opened := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(gate, os.O_WRONLY, 0)
		if err == nil {
			_, err = f.WriteString("go\n")
			f.Close()
		}
		opened <- err
	}()
	mustRun(t, h, `
		local rep = assert(tai.mcp.add{source = '{"mcpServers":{"memory":{"command":"npx","args":["-y","@modelcontextprotocol/server-memory"]}}}'})
		assert(rep.servers[1].outcome == "added", rep.servers[1].reason)
		assert(tai.mcp.enable{server = "memory"})`)
	if err := <-opened; err != nil {
		t.Fatal(err)
	}
	// The call's start waits at the gate until the spinner has shown it.
	got := mustRun(t, h, fmt.Sprintf(`
		local seen
		local text = tai.chat("go", {on_running = function(on, tick, ms, status)
			if on and status ~= "" and not seen then
				seen = status
				local f = assert(io.open(%q, "w"))
				f:write("go\n")
				f:close()
			end
		end})
		return text, seen`, gate))
	if len(got) != 2 || got[0] != "done" {
		t.Fatalf("the turn gave %v", got)
	}
	status, _ := got[1].(string)
	if want := "memory: npx is installing @modelcontextprotocol/server-memory… "; !strings.HasPrefix(status, want) {
		t.Fatalf("on_running's status was %q, want it to start %q", status, want)
	}
	if errOut := h.errOut.String(); strings.Contains(errOut, "npx is installing") {
		t.Fatalf("the start was shown on stderr too:\n%s", errOut)
	}
}
