package lua

import (
	"bytes"
	"os"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"tai/mcp"
)

// Off a terminal, a slow launcher's start is reported when it is first
// told and every startupEvery after, one safe line each, and nothing more
// once it is over.
func TestStartupLineOffTerminal(t *testing.T) {
	var out bytes.Buffer
	show := startupLine(&out)
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
	show := startupLine(s)
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
