package lua

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	glua "github.com/yuin/gopher-lua"
	"golang.org/x/sys/unix"
)

// stdinPoll is how often a read of stdin that is waiting for input looks
// whether the run was interrupted.
const stdinPoll = 50 * time.Millisecond

// ctxReader reads a file only once it has input, watching ctx meanwhile,
// so Ctrl-C stops a read that is waiting for a line instead of leaving it
// blocked until Enter (or a second Ctrl-C ends tai). A reader that is not
// a pollable file is read directly.
type ctxReader struct {
	r   io.Reader
	ctx func() context.Context
}

// Read implements io.Reader.
func (c ctxReader) Read(p []byte) (int, error) {
	if f, ok := c.r.(*os.File); ok {
		fds := []unix.PollFd{{Fd: int32(f.Fd()), Events: unix.POLLIN}}
		for {
			if ctx := c.ctx(); ctx != nil && ctx.Err() != nil {
				return 0, ErrInterrupted
			}
			n, err := unix.Poll(fds, int(stdinPoll/time.Millisecond))
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil || n > 0 {
				break // read it, and let the read report any error
			}
		}
	}
	return c.r.Read(p)
}

// installStdin replaces io.read and io.lines() (without a file name) with
// versions that Ctrl-C interrupts. They read the host's Stdin through one
// buffer and accept the formats of Lua 5.1: "*l", "*L", "*n", "*a" and a
// byte count. io.stdin:read keeps the library's own, uninterruptible read.
func (h *Host) installStdin(L *glua.LState) {
	ioTable, ok := L.GetGlobal("io").(*glua.LTable)
	if !ok {
		return
	}
	origLines := ioTable.RawGetString("lines")
	h.guardStdinFile(L, ioTable.RawGetString("stdin"))
	ioTable.RawSetString("read", L.NewFunction(h.ioRead))
	ioTable.RawSetString("lines", L.NewFunction(func(L *glua.LState) int {
		if n := L.GetTop(); n > 0 {
			args := make([]glua.LValue, n)
			for i := range args {
				args[i] = L.Get(i + 1)
			}
			if err := L.CallByParam(glua.P{Fn: origLines, NRet: glua.MultRet}, args...); err != nil {
				L.RaiseError("%s", err.Error())
			}
			return L.GetTop() - n
		}
		L.Push(L.NewFunction(func(L *glua.LState) int {
			v, err := h.readFormat(L, "*l")
			if err != nil {
				L.RaiseError("%s", err.Error())
			}
			L.Push(v)
			return 1
		}))
		return 1
	}))
}

// guardStdinFile makes io.stdin:read and io.stdin:lines fail, like
// io.read, while a question that grants something is asked with stdin not
// a terminal (see askingTerminal); other files read as before. The file
// methods are shared by every file, so the wrapper looks at its receiver.
func (h *Host) guardStdinFile(L *glua.LState, stdin glua.LValue) {
	ud, ok := stdin.(*glua.LUserData)
	if !ok {
		return
	}
	mt, ok := ud.Metatable.(*glua.LTable)
	if !ok {
		return
	}
	methods, ok := mt.RawGetString("__index").(*glua.LTable)
	if !ok {
		return
	}
	for _, name := range []string{"read", "lines"} {
		orig, ok := methods.RawGetString(name).(*glua.LFunction)
		if !ok {
			continue
		}
		methods.RawSetString(name, L.NewFunction(func(L *glua.LState) int {
			if h.prompter.granting && L.Get(1) == stdin {
				if name == "lines" {
					L.RaiseError("%s", errNoTerminal.Error())
				}
				L.Push(glua.LNil)
				L.Push(glua.LString(errNoTerminal.Error()))
				return 2
			}
			top := L.GetTop()
			args := make([]glua.LValue, top)
			for i := range args {
				args[i] = L.Get(i + 1)
			}
			L.Push(orig)
			for _, a := range args {
				L.Push(a)
			}
			L.Call(top, glua.MultRet)
			return L.GetTop() - top
		}))
	}
}

func (h *Host) stdinBuf() *bufio.Reader {
	if h.term.stdin == nil {
		h.term.stdin = bufio.NewReader(ctxReader{r: h.opts.Stdin, ctx: h.L.Context})
	}
	return h.term.stdin
}

// ioRead is io.read(formats…).
func (h *Host) ioRead(L *glua.LState) int {
	n := L.GetTop()
	if n == 0 {
		v, err := h.readFormat(L, "*l")
		return pushRead(L, v, err)
	}
	for i := 1; i <= n; i++ {
		var format string
		switch v := L.Get(i).(type) {
		case glua.LNumber:
			format = strconv.Itoa(int(v))
		case glua.LString:
			format = string(v)
		default:
			L.ArgError(i, "invalid format")
		}
		v, err := h.readFormat(L, format)
		if err != nil || v == glua.LNil {
			return pushRead(L, v, err)
		}
		L.Push(v)
	}
	return n
}

func pushRead(L *glua.LState, v glua.LValue, err error) int {
	if errors.Is(err, ErrInterrupted) {
		L.RaiseError("interrupted")
	}
	if err != nil {
		L.Push(glua.LNil)
		L.Push(glua.LString(err.Error()))
		return 2
	}
	L.Push(v)
	return 1
}

// readFormat reads one value of format from stdin; nil at end of input.
func (h *Host) readFormat(L *glua.LState, format string) (glua.LValue, error) {
	if h.prompter.granting {
		// Piped stdin never answers a question that grants something.
		return nil, errNoTerminal
	}
	r := h.stdinBuf()
	switch strings.TrimPrefix(format, "*") {
	case "l", "L":
		line, err := r.ReadString('\n')
		if err != nil && (line == "" || !errors.Is(err, io.EOF)) {
			if errors.Is(err, io.EOF) {
				return glua.LNil, nil
			}
			return glua.LNil, err
		}
		if strings.TrimPrefix(format, "*") == "l" {
			line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		}
		return glua.LString(line), nil
	case "a":
		b, err := io.ReadAll(r)
		if err != nil {
			return glua.LNil, err
		}
		return glua.LString(b), nil
	case "n":
		var word strings.Builder
		for {
			c, err := r.ReadByte()
			if err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return glua.LNil, err
			}
			if strings.IndexByte(" \t\r\n", c) >= 0 {
				if word.Len() == 0 {
					continue
				}
				_ = r.UnreadByte()
				break
			}
			word.WriteByte(c)
		}
		num, err := strconv.ParseFloat(word.String(), 64)
		if err != nil {
			return glua.LNil, nil
		}
		return glua.LNumber(num), nil
	}
	count, err := strconv.Atoi(format)
	if err != nil || count < 0 {
		L.RaiseError("bad argument to 'read' (invalid format %q)", format)
	}
	buf := make([]byte, count)
	got, err := io.ReadFull(r, buf)
	if got == 0 && count > 0 {
		if errors.Is(err, io.EOF) {
			return glua.LNil, nil
		}
		return glua.LNil, err
	}
	return glua.LString(buf[:got]), nil
}
