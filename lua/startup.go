package lua

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"

	"tai/mcp"
)

// startupEvery is how often a slow start is reported when stderr is not a
// terminal (a log, a pipe).
const startupEvery = 10 * time.Second

// startupLine shows the starts of MCP servers whose launcher is
// still fetching them (mcp.ClientOptions.OnStartup): on a terminal one
// line redrawn in place ("memory: npx is installing
// @modelcontextprotocol/server-memory… 12 s") and cleared when the start
// is over, on w; elsewhere, through say, a line when the start is first
// reported and every startupEvery after. The text is made safe to show: its last stderr line
// comes from the server.
func startupLine(w io.Writer, say func(line string)) func(mcp.StartupNotice) {
	var mu sync.Mutex
	tty := isTerminal(w)
	printed := map[string]time.Duration{} // server -> the last report's elapsed, off a terminal
	return func(n mcp.StartupNotice) {
		mu.Lock()
		defer mu.Unlock()
		if !tty {
			last, ok := printed[n.Server]
			switch {
			case n.Done:
				delete(printed, n.Server)
			case !ok || n.Elapsed-last >= startupEvery:
				printed[n.Server] = n.Elapsed
				say("tai: " + CleanText(n.String(), true))
			}
			return
		}
		if n.Done {
			fmt.Fprint(w, "\r\x1b[K")
			return
		}
		line := CleanText(n.String(), true)
		if cols := termWidth(w); cols > 1 {
			if r := []rune(line); len(r) > cols-1 {
				line = string(r[:cols-2]) + "…"
			}
		}
		fmt.Fprint(w, "\r\x1b[K"+line)
	}
}

// termWidth returns the columns of the terminal w is, 0 when it is not a
// terminal.
func termWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return 0
	}
	cols, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return cols
}

// startupStatus holds the latest report of a launcher's start during a
// chat turn, for the turn's running spinner (on_running's fourth
// argument) to show in place of a line of its own.
type startupStatus struct {
	mu   sync.Mutex
	text string
}

// set keeps n's text, or forgets it once the start is over.
func (s *startupStatus) set(n mcp.StartupNotice) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.text = ""
	if !n.Done {
		s.text = CleanText(n.String(), true)
	}
}

// get returns the text kept, "" when no start is under way.
func (s *startupStatus) get() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.text
}
