package lua

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	glua "github.com/yuin/gopher-lua"
	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// DiscardTypeAhead throws away what was typed on the terminal fd and not
// read yet. A question calls it before it shows: keys typed while
// something else ran were meant for that (the next line of the REPL, say),
// never as the answer to a question that appeared later.
func DiscardTypeAhead(fd int) error {
	return unix.IoctlSetInt(fd, unix.TCFLSH, unix.TCIFLUSH)
}

// AnswerGrace is how long the keyboard must rest after a question shows
// before a key counts as its answer: nobody reads a question and answers
// it that fast, while someone typing their next line hits key after key
// faster than that.
const AnswerGrace = 400 * time.Millisecond

// DropEarlyKeys throws away what was typed on the terminal fd before a
// question showed, and every key typed after until none has come for
// AnswerGrace: call it once the question is on the screen, before the
// prompt that takes the answer. Someone typing on without looking never
// answers it: the prompt shows once they stop. The terminal must be in
// non-canonical mode. It reports whether one of those keys was Ctrl-C,
// which cancels the question all the same.
func DropEarlyKeys(fd int) (interrupted bool, err error) {
	if err := DiscardTypeAhead(fd); err != nil {
		return false, err
	}
	deadline := time.Now().Add(AnswerGrace)
	buf := make([]byte, 64)
	for left := AnswerGrace; left > 0; left = time.Until(deadline) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(left/time.Millisecond)+1)
		if errors.Is(err, unix.EINTR) || err == nil && n == 0 {
			continue
		}
		if err != nil {
			return false, err
		}
		k, err := unix.Read(fd, buf)
		if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
			continue
		}
		if err != nil || k == 0 {
			return false, nil // the end of input: the read that follows sees it
		}
		if bytes.IndexByte(buf[:k], 3) >= 0 {
			return true, nil
		}
		deadline = time.Now().Add(AnswerGrace)
	}
	return false, DiscardTypeAhead(fd)
}

// errKeyInterrupt and errKeyEOF are what readKey gives for Ctrl-C (or the
// context ending) and Ctrl-D.
var (
	errKeyInterrupt = errors.New("interrupt")
	errKeyEOF       = errors.New("eof")
)

// rlKey is rl:key(prompt) -> key | nil, err: it discards what was typed
// ahead, shows prompt and returns the one key pressed, without Enter:
// a printable character as itself, "enter" for Enter, "" for any other
// key (an arrow, Escape). Ctrl-C gives nil, "interrupt"; Ctrl-D nil, "eof".
// The terminal is in raw mode only while it waits, and restored however
// the wait ends. Without a terminal to read from it gives nil,
// "not a terminal" (read a line with rl:read instead); while a question
// that grants something is asked with stdin not a terminal, the key comes
// from /dev/tty (see askingTerminal), never from stdin.
func (h *Host) rlKey(L *glua.LState) int {
	r := checkRL(L)
	r.esc.pause()
	defer r.esc.resume()
	prompt := L.OptString(2, "? ")
	var in *os.File
	out := r.out
	if h.prompter.granting {
		if h.prompter.tty == nil {
			h.prompter.untold = true // the denial says why (see hostPrompter)
			return fail(L, "eof")
		}
		in, out = h.prompter.tty, h.prompter.tty
	} else {
		f, ok := h.opts.Stdin.(*os.File)
		if !ok || !isTerminal(f) {
			return fail(L, "not a terminal")
		}
		in = f
	}
	r.paste.discard()
	key, err := readKey(luaContext(L), in, out, prompt)
	if err != nil {
		// errKeyInterrupt and errKeyEOF read "interrupt" and "eof".
		return fail(L, err.Error())
	}
	L.Push(glua.LString(key))
	return 1
}

// rlDiscard is rl:discard(): what was typed on the terminal and not read
// yet is thrown away, and so is every key typed after until the keyboard
// has rested AnswerGrace (see DropEarlyKeys), before a question read with
// rl:read (ask_user's): call it once the question is on the screen. It
// gives true, or nil, "interrupt" when one of those keys was Ctrl-C.
// Without a terminal it does nothing.
func (h *Host) rlDiscard(L *glua.LState) int {
	r := checkRL(L)
	r.esc.pause()
	defer r.esc.resume()
	in, ok := h.opts.Stdin.(*os.File)
	if h.prompter.granting && h.prompter.tty != nil {
		in, ok = h.prompter.tty, true
	}
	if !ok || !isTerminal(in) {
		return 0
	}
	r.paste.discard()
	fd := int(in.Fd())
	saved, err := term.MakeRaw(fd)
	if err != nil {
		return fail(L, "discarding what was typed ahead: "+err.Error())
	}
	interrupted, err := DropEarlyKeys(fd)
	term.Restore(fd, saved)
	switch {
	case err != nil:
		return fail(L, "discarding what was typed ahead: "+err.Error())
	case interrupted:
		return fail(L, "interrupt")
	}
	L.Push(glua.LTrue)
	return 1
}

// readKey puts the terminal in raw mode, discards type-ahead and the keys
// of the AnswerGrace (see DropEarlyKeys), writes prompt to out and waits for one key (see rlKey). Ending ctx gives up
// the wait with errKeyInterrupt; no read is left behind to take a later
// key.
func readKey(ctx context.Context, in *os.File, out io.Writer, prompt string) (string, error) {
	fd := int(in.Fd())
	saved, err := term.MakeRaw(fd)
	if err != nil {
		return "", fmt.Errorf("reading a key: %w", err)
	}
	defer term.Restore(fd, saved)
	interrupted, err := DropEarlyKeys(fd)
	if err != nil {
		return "", fmt.Errorf("reading a key: discarding what was typed ahead: %w", err)
	}
	if interrupted {
		io.WriteString(out, "^C\r\n")
		return "", errKeyInterrupt
	}
	io.WriteString(out, prompt)
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return "", fmt.Errorf("reading a key: %w", err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	stop := context.AfterFunc(ctx, func() { unix.Write(p[1], []byte{0}) })
	defer stop()
	buf := make([]byte, 64)
	for {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(p[0]), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return "", fmt.Errorf("reading a key: %w", err)
		}
		if fds[1].Revents != 0 {
			io.WriteString(out, "\r\n")
			return "", errKeyInterrupt
		}
		if fds[0].Revents == 0 {
			continue
		}
		n, err := unix.Read(fd, buf)
		if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
			continue
		}
		if err != nil || n == 0 {
			io.WriteString(out, "\r\n")
			return "", errKeyEOF
		}
		// What came in the same read as the key (the rest of an escape
		// sequence, an Enter after it) goes with it.
		key, echo, err := keyName(buf[0])
		io.WriteString(out, echo+"\r\n")
		return key, err
	}
}

// keyName names the key a byte starts and how it is echoed; Ctrl-C and
// Ctrl-D name no key but errKeyInterrupt and errKeyEOF.
func keyName(b byte) (key, echo string, err error) {
	switch {
	case b == 3:
		return "", "^C", errKeyInterrupt
	case b == 4:
		return "", "^D", errKeyEOF
	case b == '\r' || b == '\n':
		return "enter", "", nil
	case b >= 0x20 && b < 0x7f:
		return string(rune(b)), string(rune(b)), nil
	}
	return "", "", nil
}
