package oauth

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// OpenBrowser opens rawURL in a browser: the command in $BROWSER when set
// (its words, with %s replaced by the URL or the URL added last; no
// shell), else the platform's opener (open, xdg-open, rundll32). It
// returns once the command has started; the command is left to run.
func OpenBrowser(rawURL string) error {
	var argv []string
	if b := strings.TrimSpace(os.Getenv("BROWSER")); b != "" {
		// Like Python's webbrowser: a list of commands separated by ':';
		// the first one is used.
		first, _, _ := strings.Cut(b, string(os.PathListSeparator))
		words := strings.Fields(first)
		placed := false
		for i, w := range words {
			if strings.Contains(w, "%s") {
				words[i] = strings.ReplaceAll(w, "%s", rawURL)
				placed = true
			}
		}
		if !placed {
			words = append(words, rawURL)
		}
		argv = words
	} else {
		switch runtime.GOOS {
		case "darwin":
			argv = []string{"open", rawURL}
		case "windows":
			argv = []string{"rundll32", "url.dll,FileProtocolHandler", rawURL}
		default:
			argv = []string{"xdg-open", rawURL}
		}
	}
	if len(argv) == 0 {
		return fmt.Errorf("$BROWSER is empty")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, nil, nil
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("cannot start the browser %q: %v", argv[0], err)
	}
	go cmd.Wait() //nolint:errcheck // reaped; its outcome is not ours to judge
	return nil
}
