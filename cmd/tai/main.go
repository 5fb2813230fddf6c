package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"tai/engine/llm"
	"tai/engine/sandbox"
	"tai/engine/tool"
	"tai/lua"
	"tai/mcp/server"
	"tai/stdlib"
	"tai/vault"
)

// version is tai.version and what --version prints.
const version = "0.1.0"

// options is the parsed command line. A later flag is one field here and
// one line in newFlags.
type options struct {
	eval       string
	evalSet    bool
	prompt     string
	promptSet  bool
	cont       bool
	auto       bool
	yolo       bool
	profile    string
	vault      string
	clean      bool
	dumpStdlib string
	serveSet   bool
	serveFrom  keySource
	serveKey   string   // the key given on the command line (keyFromArgv)
	serveBare  int      // words after a lone --serve-mcp, else -1 (see parse)
	argvKeys   []string // every key given on the command line, hidden at start
	cmdline    *cmdline // the process's own command line, where keys are hidden
	mcpPort    string
	mcpBind    string
	version    bool
	help       bool
	args       []string
}

func newFlags(o *options, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("tai", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {}
	fs.Func("e", "run `CHUNK`", func(s string) error { o.eval, o.evalSet = s, true; return nil })
	fs.Func("p", "one agent turn on `PROMPT`", func(s string) error { o.prompt, o.promptSet = s, true; return nil })
	fs.BoolVar(&o.cont, "c", false, "continue the last conversation")
	fs.BoolVar(&o.cont, "continue", false, "continue the last conversation")
	fs.BoolVar(&o.auto, "auto", false, "approve non-safe tools, showing each call")
	fs.BoolVar(&o.yolo, "yolo", false, "approve non-safe tools without asking")
	fs.StringVar(&o.profile, "profile", "", "the model profile `NAME`")
	fs.StringVar(&o.vault, "vault", "", "vault `PATH`")
	fs.BoolVar(&o.clean, "clean", false, "ignore user overrides")
	fs.StringVar(&o.dumpStdlib, "dump-stdlib", "", "write the built-in Lua files to `DIR`")
	fs.BoolFunc("serve-mcp", "serve MCP (the key from $TAI_MCP_KEY, or - for stdin)", func(s string) error { o.setServe(s, len(fs.Args())); return nil })
	fs.StringVar(&o.mcpPort, "mcp-port", "", "the MCP server's `PORT`")
	fs.StringVar(&o.mcpBind, "mcp-bind", "", "the MCP server's `ADDR`")
	fs.BoolVar(&o.version, "version", false, "print the version")
	fs.BoolVar(&o.help, "help", false, "print help")
	fs.BoolVar(&o.help, "h", false, "print help")
	return fs
}

func main() {
	// tai starts itself again as the shell tool's keeper and as the Lua
	// sandbox: such a process becomes that helper and exits, before any of
	// tai proper runs.
	sandbox.RunKeeperIfAsked()
	lua.RunSandboxIfAsked()
	// Then a key given on the command line leaves the process
	// list: the words are parsed from copies, then hidden where every
	// user of the machine reads them.
	own := ownCmdline()
	var args []string
	for i, a := range os.Args {
		if i > 0 { // (execve may give no words at all)
			args = append(args, strings.Clone(a))
		}
	}
	o := options{cmdline: own}
	perr := parse(args, &o)
	own.hide(o.argvKeys)
	// Before anything reads a key: children of the same user must not read
	// tai's environment or memory, and what they leave running stays ours
	// to stop. Before tai starts a process or listens for Ctrl-C, too: the
	// check Go makes on the first start is done here, where it cannot
	// count one Ctrl-C twice.
	if err := sandbox.ProtectProcess(); err != nil {
		fmt.Fprintf(os.Stderr, "tai: %v\n", err)
		os.Exit(lua.ExitError)
	}
	code := run(&o, perr, os.Stdout, os.Stderr)
	// Whatever a command, a server or a script left running (detached or
	// not) ends with tai.
	sandbox.StopChildren(5 * time.Second)
	os.Exit(code)
}

// run runs tai as o says; perr is parse's error.
func run(o *options, perr error, stdout, stderr io.Writer) int {
	if len(o.argvKeys) > 0 {
		io.WriteString(stderr, keyWarning)
	}
	if err := perr; err != nil {
		if errors.Is(err, flag.ErrHelp) {
			io.WriteString(stdout, usage)
			return lua.ExitOK
		}
		msg := err.Error()
		if rest, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
			msg = "unknown flag " + rest
		}
		fmt.Fprintf(stderr, "tai: %s\nRun tai --help for usage.\n", msg)
		return lua.ExitUsage
	}

	switch {
	case o.help:
		return help(o, stdout, stderr)
	case o.version:
		fmt.Fprintf(stdout, "tai %s\n", version)
		return lua.ExitOK
	case o.dumpStdlib != "":
		written, err := stdlib.Dump(o.dumpStdlib)
		if err != nil {
			fmt.Fprintf(stderr, "tai: %v\n", err)
			return lua.ExitError
		}
		for _, p := range written {
			fmt.Fprintln(stdout, p)
		}
		return lua.ExitOK
	}

	mode := tool.Interactive
	switch {
	case o.auto && o.yolo:
		return usageError(stderr, "--auto and --yolo exclude each other; give one")
	case o.auto:
		mode = tool.Auto
	case o.yolo:
		mode = tool.Yolo
	}
	if o.profile != "" {
		if err := llm.ValidProfileName(o.profile); err != nil {
			return usageError(stderr, fmt.Sprintf("--profile %q: %v", o.profile, err))
		}
	}

	// When the terminal hangs up, tai takes what it started down with it.
	// (SIGTERM is left to the server and tai.serve, whose graceful
	// shutdown it is; main stops what is left after them.) Started with
	// SIGHUP ignored, as under nohup, tai was asked to outlive a hang-up
	// and does; what it starts gets SIGHUP at its default all the same
	// (the keeper of shell commands and the mcp package see to that).
	if !signal.Ignored(syscall.SIGHUP) {
		defer endWithTai(syscall.SIGHUP)()
	}

	inv := lua.Invocation{Mode: lua.ModeREPL, Continue: o.cont}
	switch {
	case o.serveSet:
		if o.promptSet || o.evalSet || len(o.args) > 0 {
			return usageError(stderr, "--serve-mcp runs the server only; it takes no -p, -e or script")
		}
		req, err := serveRequest(o, os.Stdin)
		if err != nil {
			return usageError(stderr, err.Error())
		}
		inv = lua.Invocation{Mode: lua.ModeServe, Serve: req}
	case o.mcpPort != "" || o.mcpBind != "":
		return usageError(stderr, "--mcp-port and --mcp-bind go with --serve-mcp")
	case o.promptSet && o.evalSet:
		return usageError(stderr, "-p and -e exclude each other; give one")
	case o.promptSet:
		if strings.TrimSpace(o.prompt) == "" {
			return usageError(stderr, "-p needs a prompt: tai -p \"what to do\"")
		}
		if len(o.args) > 0 {
			return usageError(stderr, fmt.Sprintf("-p takes one prompt, but %q follows it; quote the whole prompt", o.args[0]))
		}
		inv = lua.Invocation{Mode: lua.ModePrompt, Prompt: o.prompt, Continue: o.cont}
	case o.cont && (o.evalSet || len(o.args) > 0):
		return usageError(stderr, "-c continues a conversation: use it alone (the REPL) or with -p")
	case o.evalSet:
		inv = lua.Invocation{Mode: lua.ModeEval, Chunk: o.eval, Args: o.args}
	case len(o.args) > 0:
		inv = lua.Invocation{Mode: lua.ModeScript, Script: o.args[0], Args: o.args[1:]}
		if st, err := os.Stat(inv.Script); err != nil || st.IsDir() {
			return usageError(stderr, notAScript(inv.Script, err))
		}
	}

	var h *lua.Host
	h, err := lua.New(&lua.Options{
		Version:           version,
		Profile:           o.profile,
		Mode:              mode,
		Clean:             o.clean,
		Passphrase:        newPassphrase,
		CurrentPassphrase: currentPassphrase,
		ReadHidden:        readHiddenOnTerminal,
		OpenFile:          openOnDesktop,
		HideKey:           o.cmdline.hideKey,
		Vault: func() (*vault.Store, error) {
			path := o.vault
			if path == "" {
				path = vault.DefaultPath()
			}
			// Ctrl-C at the prompt stops the command that needed the
			// vault, as it would anywhere else.
			return vault.Open(path, passphraseOptions(func() {
				if h != nil {
					h.Interrupt()
				}
			}))
		},
		Stdout: stdout,
		Stderr: stderr,
	})
	if err != nil {
		fmt.Fprintf(stderr, "tai: %v\n", err)
		return lua.ExitError
	}
	defer h.Close()
	if o.profile != "" {
		// A named profile is checked before anything runs, so a typo is a
		// usage error rather than a failure later in a script or turn.
		if _, err := h.Engine(); err != nil {
			fmt.Fprintf(stderr, "tai: %v\n", err)
			if errors.Is(err, llm.ErrProfileNotFound) {
				return lua.ExitUsage
			}
			return lua.ExitError
		}
	}
	return h.Run(context.Background(), inv)
}

// notAScript says why name, given where a script belongs, cannot run. tai
// has no subcommands, so a bare word such as "help" is pointed at --help.
func notAScript(name string, statErr error) string {
	switch {
	case statErr == nil:
		return fmt.Sprintf("cannot run %q: it is a folder, not a Lua script", name)
	case !strings.ContainsAny(name, "/.") && errors.Is(statErr, fs.ErrNotExist):
		return fmt.Sprintf("cannot run %q: there is no such script, and tai has no subcommands (for help: tai --help)", name)
	}
	return fmt.Sprintf("cannot run %q: not a readable file", name)
}

// serveRequest reads --serve-mcp (the key from where it says, see
// readServeKey), --mcp-port and --mcp-bind over the environment's defaults; a
// missing or weak key or a bad port is a usage error. $TAI_MCP_KEY leaves
// tai's environment whatever gave the key, so nothing tai starts inherits
// it.
func serveRequest(o *options, stdin *os.File) (lua.ServeRequest, error) {
	key, err := readServeKey(o, stdin)
	os.Unsetenv(server.KeyEnv)
	if err != nil {
		return lua.ServeRequest{}, err
	}
	req, err := lua.DefaultServeRequest(os.Getenv)
	if err != nil {
		return req, err
	}
	req.Key = key
	if o.mcpPort != "" {
		p, err := lua.ParsePort(o.mcpPort)
		if err != nil {
			return req, fmt.Errorf("--mcp-port: %v", err)
		}
		req.Port = p
	}
	if o.mcpBind != "" {
		req.Bind = o.mcpBind
	}
	return req, nil
}

// endWithTai makes the signals given end tai with whatever it started
// (see sandbox.StopChildren), with status 128+signal, where they would have
// killed tai alone. It returns the function that undoes that.
func endWithTai(sigs ...os.Signal) (undo func()) {
	ends := make(chan os.Signal, 1)
	done := make(chan struct{})
	signal.Notify(ends, sigs...)
	go func() {
		select {
		case sig := <-ends:
			sandbox.StopChildren(2 * time.Second)
			os.Exit(128 + int(sig.(syscall.Signal)))
		case <-done:
		}
	}()
	return func() {
		signal.Stop(ends)
		close(done)
	}
}

// usageError reports bad command-line usage.
func usageError(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "tai: %s\nRun tai --help for usage.\n", msg)
	return lua.ExitUsage
}

// passphraseOptions gives the vault its passphrase source:
// $TAI_VAULT_PASSPHRASE when set (asked once; a wrong one stays wrong), else
// a hidden prompt on the terminal, asked again after a wrong or empty
// answer, else (no terminal) none, so that what needs the passphrase fails
// at once saying to set the variable. interrupt is called when the person
// presses Ctrl-C at the prompt.
func passphraseOptions(interrupt func()) *vault.Options {
	if p, ok := os.LookupEnv("TAI_VAULT_PASSPHRASE"); ok {
		return &vault.Options{Passphrase: func() (string, error) { return p, nil }}
	}
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return &vault.Options{}
	}
	tty.Close()
	return &vault.Options{PassphrasePrompt: func(try int, last error) (string, error) {
		tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
		if err != nil {
			return "", errNoTerminal
		}
		defer tty.Close()
		// The prompt is tai's own, in the middle of whatever was going
		// on: it says first why it asks.
		switch {
		case try == 1 && errors.Is(last, vault.ErrSealedElsewhere):
			fmt.Fprintf(tty, "\rtai: %s since tai opened it; type its passphrase to go on (Ctrl-C cancels)\n", strings.TrimPrefix(last.Error(), "vault: "))
		case try == 1:
			fmt.Fprint(tty, "\rtai: this needs the sealed vault's passphrase (Ctrl-C cancels)\n")
		case errors.Is(last, vault.ErrWrongPassphrase):
			fmt.Fprintf(tty, "wrong passphrase; try %d of %d\n", try, vault.PassphraseTries)
		case errors.Is(last, vault.ErrNoPassphrase):
			fmt.Fprintf(tty, "the passphrase is empty; try %d of %d\n", try, vault.PassphraseTries)
		default:
			fmt.Fprintf(tty, "%v; try %d of %d\n", last, try, vault.PassphraseTries)
		}
		pass, err := readHidden(tty, "vault passphrase: ")
		if errors.Is(err, errCancelled) && interrupt != nil {
			interrupt()
		}
		return pass, err
	}}
}

// newPassphrase is the passphrase tai.vault.seal() seals with:
// $TAI_VAULT_PASSPHRASE, else typed twice on the terminal, since a typo
// there would lock the vault for good.
func newPassphrase() (string, error) {
	if p, ok := os.LookupEnv("TAI_VAULT_PASSPHRASE"); ok {
		return p, nil
	}
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return "", errNoTerminal
	}
	defer tty.Close()
	first, err := readHidden(tty, "new vault passphrase: ")
	if err != nil || first == "" {
		return first, err
	}
	again, err := readHidden(tty, "the same again: ")
	if err != nil {
		return "", err
	}
	if again != first {
		return "", errors.New("the two passphrases typed differ; nothing was sealed: try again")
	}
	return first, nil
}

// openOnDesktop opens path with the desktop's opener (open on macOS,
// xdg-open elsewhere) when there is a display to show it on, and reports
// whether it did. The opener is left to run.
func openOnDesktop(path string) (bool, error) {
	argv := []string{"xdg-open", path}
	switch {
	case runtime.GOOS == "darwin":
		if os.Getenv("SSH_CONNECTION") != "" {
			return false, nil // the display is the other machine's
		}
		argv = []string{"open", path}
	case os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "":
		return false, nil
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if err := cmd.Start(); err != nil {
		return false, fmt.Errorf("cannot start %s: %v", argv[0], err)
	}
	go cmd.Wait() //nolint:errcheck // reaped; the viewer's outcome is its own
	return true, nil
}

// currentPassphrase is the passphrase tai.vault.unseal() unseals with:
// $TAI_VAULT_PASSPHRASE, else typed once on the terminal (a wrong one
// changes nothing).
func currentPassphrase() (string, error) {
	if p, ok := os.LookupEnv("TAI_VAULT_PASSPHRASE"); ok {
		return p, nil
	}
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return "", errNoTerminal
	}
	defer tty.Close()
	return readHidden(tty, "vault passphrase: ")
}

// readHiddenOnTerminal reads a line typed on /dev/tty without echo, for
// tai.term.read_hidden (/secret).
func readHiddenOnTerminal(prompt string) (string, error) {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return "", errors.New("no terminal to type the value on")
	}
	defer tty.Close()
	text, err := readHidden(tty, prompt)
	if errors.Is(err, errCancelled) {
		return "", lua.ErrCancelled
	}
	return text, err
}

var (
	errNoTerminal = errors.New("the vault needs a passphrase: set TAI_VAULT_PASSPHRASE (no terminal to ask on)")
	errCancelled  = errors.New("cancelled at the passphrase prompt")
)

// readHidden shows prompt on tty and reads one line without echo. Enter
// ends it; Backspace and Ctrl-U edit it; Ctrl-C cancels (errCancelled);
// Ctrl-D on an empty line ends the input with no answer. What was typed
// before the prompt showed, and after what tai said before it until the
// keyboard has rested lua.AnswerGrace (see lua.DropEarlyKeys), is
// discarded: it was meant for something else (the next line of the REPL,
// say), never for a passphrase.
func readHidden(tty *os.File, prompt string) (string, error) {
	// Echo goes off before the prompt appears, so nothing typed as soon as
	// the prompt shows can be echoed. The line is read byte by byte, so
	// Ctrl-C is seen at once rather than after Enter.
	fd := int(tty.Fd())
	saved, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return "", fmt.Errorf("reading the passphrase: %w", err)
	}
	quiet := *saved
	quiet.Lflag &^= unix.ECHO | unix.ICANON | unix.ISIG
	quiet.Iflag |= unix.ICRNL
	quiet.Cc[unix.VMIN], quiet.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &quiet); err != nil {
		return "", fmt.Errorf("reading the passphrase: %w", err)
	}
	defer unix.IoctlSetTermios(fd, unix.TCSETS, saved)
	interrupted, err := lua.DropEarlyKeys(fd)
	if err != nil {
		return "", fmt.Errorf("reading the passphrase: discarding what was typed ahead: %w", err)
	}
	if interrupted {
		fmt.Fprintln(tty)
		return "", errCancelled
	}
	fmt.Fprint(tty, prompt)
	defer fmt.Fprintln(tty)
	return readLine(bufio.NewReader(tty))
}

// readLine reads a line typed on a terminal with echo and line editing
// off: see readHidden.
func readLine(r io.ByteReader) (string, error) {
	var line []byte
	for {
		b, err := r.ReadByte()
		if err != nil {
			if errors.Is(err, io.EOF) && len(line) > 0 {
				return string(line), nil
			}
			if errors.Is(err, io.EOF) {
				return "", errors.New("no passphrase given (end of input)")
			}
			return "", fmt.Errorf("reading the passphrase: %w", err)
		}
		switch b {
		case '\n', '\r':
			return string(line), nil
		case 0x03: // Ctrl-C
			return "", errCancelled
		case 0x04: // Ctrl-D
			if len(line) == 0 {
				return "", errors.New("no passphrase given (Ctrl-D)")
			}
		case 0x7f, 0x08: // Backspace
			if len(line) > 0 {
				_, size := utf8.DecodeLastRune(line)
				line = line[:len(line)-size]
			}
		case 0x15: // Ctrl-U
			line = line[:0]
		default:
			line = append(line, b)
		}
	}
}
