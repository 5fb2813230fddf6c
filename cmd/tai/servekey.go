package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"tai/mcp/server"
)

// keySource says where --serve-mcp takes the server's key from.
type keySource int

const (
	// keyFromEnv: --serve-mcp alone, the key is $TAI_MCP_KEY.
	keyFromEnv keySource = iota
	// keyFromStdin: --serve-mcp -, the key is one line on stdin.
	keyFromStdin
	// keyFromArgv: --serve-mcp KEY or --serve-mcp=KEY, the key is on the
	// command line, where every user of the machine could read it.
	keyFromArgv
)

// maxKeyLine bounds the line --serve-mcp - reads.
const maxKeyLine = 4096

// setServe records one --serve-mcp on the command line: value is "true"
// for the flag alone (the flag package's way of saying so), else what
// follows its "=". rest is how many words follow the flag, so that parse
// can tell whether the next word is the flag's own.
func (o *options) setServe(value string, rest int) {
	o.serveSet, o.serveBare = true, -1
	switch value {
	case "true":
		o.serveFrom, o.serveKey, o.serveBare = keyFromEnv, "", rest
	default:
		o.serveWord(value)
	}
}

// serveWord takes the word given to --serve-mcp: "-" for stdin, else the
// key itself.
func (o *options) serveWord(word string) {
	if word == "-" {
		o.serveFrom, o.serveKey = keyFromStdin, ""
		return
	}
	o.serveFrom, o.serveKey = keyFromArgv, word
	o.argvKeys = append(o.argvKeys, word)
}

// parse reads the command line into o. --serve-mcp takes no value of its
// own: the word right after it is its value when it does not start with
// "-" (a key, still accepted) or is "-" itself (the key on stdin); any
// other word starting with "-" is the next flag.
func parse(argv []string, o *options) error {
	argv = promptLast(argv)
	fs := newFlags(o, io.Discard)
	o.serveBare = -1
	for {
		if err := fs.Parse(argv); err != nil {
			rest := fs.Args()
			if o.serveBare == len(rest)+1 && strings.HasPrefix(err.Error(), "flag provided but not defined") {
				// Right after a lone --serve-mcp, likely a key that
				// starts with "-": hidden, and not repeated.
				o.argvKeys = append(o.argvKeys, argv[len(argv)-len(rest)-1])
				return fmt.Errorf("the word after --serve-mcp starts with \"-\" and is no flag: a key cannot go there; give it in %s (or on stdin: tai --serve-mcp -)", server.KeyEnv)
			}
			return err
		}
		rest := fs.Args()
		if len(rest) == 0 || o.serveBare != len(rest) {
			o.args = rest
			return nil
		}
		// The word right after a lone --serve-mcp is its value: parse
		// on from the word after it.
		o.serveBare = -1
		o.serveWord(rest[0])
		argv = rest[1:]
	}
}

// turnFlags are the flags a person may put between -p and its prompt
// (tai -p --auto "…"), each with whether it takes a value.
var turnFlags = map[string]bool{"auto": false, "yolo": false, "c": false, "continue": false, "clean": false, "profile": true, "vault": true}

// promptLast moves a -p followed by turn flags after them, so that
// tai -p --auto "…" means tai --auto -p "…": a prompt never starts with one
// of those flags. Anything else after -p (a word, -p=…, another flag) is
// left as it is.
func promptLast(argv []string) []string {
	for i, w := range argv {
		if w == "--" {
			return argv
		}
		if w != "-p" && w != "--p" {
			continue
		}
		j := i + 1
		for j < len(argv) {
			name, _, hasValue := strings.Cut(strings.TrimLeft(argv[j], "-"), "=")
			takes, ok := turnFlags[name]
			if !ok || !strings.HasPrefix(argv[j], "-") {
				break
			}
			j++
			if takes && !hasValue {
				j++
			}
		}
		if j == i+1 || j >= len(argv) {
			return argv
		}
		out := append([]string{}, argv[:i]...)
		out = append(out, argv[i+1:j]...)
		out = append(out, w)
		return append(out, argv[j:]...)
	}
	return argv
}

// keyWarning is what tai says when the key was given on the command line.
const keyWarning = `tai: warning: the key given after --serve-mcp was in the process list, where every
user of this machine can read it, until tai hid it just now (it shows as ********),
and it stays in your shell's history. Make a new key and give it so that neither
holds it:
  export TAI_MCP_KEY=$(openssl rand -hex 32); tai --serve-mcp
or on stdin:  tai --serve-mcp - < key-file
`

// readServeKey returns the server's key from where o says it is. A key read
// from $TAI_MCP_KEY is removed from tai's environment, so nothing tai
// starts inherits it.
func readServeKey(o *options, stdin *os.File) (string, error) {
	var key, from string
	switch o.serveFrom {
	case keyFromArgv:
		key, from = o.serveKey, "--serve-mcp KEY"
	case keyFromStdin:
		k, err := readKey(stdin)
		if err != nil {
			return "", fmt.Errorf("--serve-mcp -: %v", err)
		}
		key, from = k, "--serve-mcp -: the key read from stdin"
	default:
		key, from = os.Getenv(server.KeyEnv), "--serve-mcp: the key in "+server.KeyEnv
		if key == "" {
			return "", fmt.Errorf("--serve-mcp: %s is not set: export %s=$(openssl rand -hex 32), then run tai --serve-mcp (or give the key on stdin: tai --serve-mcp -)", server.KeyEnv, server.KeyEnv)
		}
	}
	if err := server.CheckKey(key); err != nil {
		return "", fmt.Errorf("%s: %v", from, err)
	}
	return key, nil
}

// readKey reads the key as one line from stdin: hidden, at a prompt on the
// terminal when stdin is one, else the first line of what is piped in.
func readKey(stdin *os.File) (string, error) {
	if term.IsTerminal(int(stdin.Fd())) {
		tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
		if err != nil {
			return "", fmt.Errorf("stdin is a terminal, but it cannot be opened to ask for the key: %v", err)
		}
		defer tty.Close()
		key, err := readHidden(tty, "MCP server key (hidden): ")
		if err == nil && key == "" {
			return "", errors.New("no key typed: type or paste the key, then Enter")
		}
		return key, err
	}
	var line []byte
	b := make([]byte, 1)
	for {
		// One byte at a time: nothing after the key's line is taken from
		// whoever reads stdin next.
		n, err := stdin.Read(b)
		if n == 1 {
			if b[0] == '\n' {
				break
			}
			if len(line) == maxKeyLine {
				return "", fmt.Errorf("the first line of stdin is longer than %d bytes: it should hold the key alone", maxKeyLine)
			}
			line = append(line, b[0])
			continue
		}
		if errors.Is(err, io.EOF) {
			if len(line) == 0 {
				return "", fmt.Errorf("stdin ended before a key was given: pipe in one line holding the key (tai --serve-mcp - < key-file), or set %s instead", server.KeyEnv)
			}
			break
		}
		if err != nil {
			return "", fmt.Errorf("reading the key from stdin: %v", err)
		}
	}
	key := strings.TrimSuffix(string(line), "\r")
	if key == "" {
		return "", fmt.Errorf("the first line of stdin is empty: it should hold the key (tai --serve-mcp - < key-file), or set %s instead", server.KeyEnv)
	}
	return key, nil
}
