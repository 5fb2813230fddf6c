package lua

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/chzyer/readline"
	glua "github.com/yuin/gopher-lua"
	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"tai/mcp/screen"
)

const readlineType = "tai.readline"

// termState is the terminal side of the REPL the host keeps (owner
// goroutine only).
type termState struct {
	editor *rl           // the line editor made last, for a login's pasted redirect
	stdin  *bufio.Reader // io.read's buffer over Stdin (see installStdin)
}

// openTerm installs tai.term, the terminal side of the REPL:
//
//	tai.term.isatty([stream]) -> bool    stream ("stdout", "stderr" or "stdin";
//	                                     default stdout) is a terminal
//	tai.term.color() -> bool             isatty() and NO_COLOR unset
//	tai.term.write(s)                    writes s to stdout, no newline
//	tai.term.ewrite(s)                   writes s to stderr, no newline
//	tai.term.warn(s)                     writes s and a newline to stderr
//	tai.term.read_stdin() -> text | nil, err
//	                                     reads all of stdin (at most MaxStdin bytes)
//	tai.term.history_file() -> path      $XDG_STATE_HOME/tai/history
//	tai.term.protect(fn, ...) -> true, results… | false, err
//	    like pcall, with a traceback in err, and Ctrl-C stops fn (err is
//	    "interrupted")
//	tai.term.interrupt() -> bool         stops the innermost protected run (a
//	                                     running turn included) as Ctrl-C
//	                                     would; false when none runs
//	tai.term.width([stream]) -> columns  0 when stream is not a terminal
//	tai.term.clean(s [, oneline]) -> s   s made safe to show: control
//	                                     characters (ESC, CR, C1), invalid
//	                                     UTF-8 and bidi overrides rendered
//	                                     visibly as \xNN or \uNNNN; newline
//	                                     and tab kept unless oneline; with
//	                                     oneline also \n, \t and every
//	                                     invisible character (\u200b, tags,
//	                                     odd spaces: screen.VisibleLine)
//	tai.term.fold(s, lines, bytes) -> shown, note
//	                                     s rendered for a person to approve
//	                                     (screen.Fold): first and last lines
//	                                     of a long one, runs of blanks
//	                                     counted ("⟨3000 spaces⟩"), note
//	                                     says what was left out ("" when
//	                                     nothing)
//	tai.term.words(list [, width]) -> { line, … }
//	                                     each word of list on lines of its
//	                                     own, shell-quoted and rendered with
//	                                     clean(w, true), a long one folded
//	                                     at width columns onto lines that
//	                                     start with "↪ " (screen.ShowWords)
//	tai.term.readline{history=path, complete=fn, output="stdout"|"stderr"} -> rl
//	    complete(line) gets the text before the cursor and returns the
//	    candidates for its last word (whole words); output is where the
//	    prompt and the edited line are drawn (stderr keeps stdout clean
//	    for tai -p)
//	rl:read(prompt [, {escape=true}]) -> line | line, "more" | nil, "interrupt" | nil, "eof"
//	    escape: an Esc pressed alone cancels, as Ctrl-C does ("interrupt")
//	    a bracketed paste is one line however many lines it holds (its
//	    newlines are in line; a long one is shown as "[Pasted text #1 +40
//	    lines]" while editing); "more" says the person ended the line
//	    with Ctrl-J or Alt-Enter to type a further one
//	rl:key([prompt])             -> key | nil, err: one key, without Enter,
//	    type-ahead discarded first (see rlKey)
//	rl:discard() -> true | nil, "interrupt"
//	    throws away what was typed ahead and what is typed until the
//	    keyboard has rested 0.4 s (Ctrl-C among it gives "interrupt");
//	    call it once a question read with rl:read is on the screen
//	rl:add_history(line)         a multi-line entry is recalled whole
//	rl:suspend()                 bracketed paste off until the next read
//	rl:watch_escape(on)          while on (a turn or a !command runs),
//	    keys reach tai as they are typed, and Esc pressed alone stops
//	    the running command as Ctrl-C does; off restores the terminal
//	rl:close()
//	rl:read_hidden(prompt)       tai.term.read_hidden, rl:watch_escape
//	    paused meanwhile (as rl:read pauses it)
//	tai.term.read_hidden(prompt) -> text | nil, err
//	    a line typed on the terminal without echo (a secret's value);
//	    err is "interrupt" for Ctrl-C
func (h *Host) openTerm(L *glua.LState, tai *glua.LTable) {
	tai.RawSetString("notify", L.NewFunction(h.notify))
	mt := L.NewTypeMetatable(readlineType)
	L.SetField(mt, "__index", L.SetFuncs(L.NewTable(), map[string]glua.LGFunction{
		"read":         h.rlRead,
		"key":          h.rlKey,
		"discard":      h.rlDiscard,
		"add_history":  rlAddHistory,
		"suspend":      rlSuspend,
		"close":        h.rlClose,
		"watch_escape": h.rlWatchEscape,
		"read_hidden":  h.rlReadHidden,
	}))
	tai.RawSetString("term", L.SetFuncs(L.NewTable(), map[string]glua.LGFunction{
		"isatty":       h.isatty,
		"color":        h.color,
		"write":        h.write,
		"ewrite":       h.ewrite,
		"read_stdin":   h.readStdin,
		"warn":         h.warn,
		"history_file": h.historyFile,
		"protect":      h.protect,
		"readline":     h.newReadline,
		"interrupt":    h.luaInterrupt,
		"clean":        luaClean,
		"words":        luaWords,
		"fold":         luaFold,
		"width":        h.width,
		"read_hidden":  h.readHidden,
	}))
}

// ErrCancelled is what Options.ReadHidden returns when the person cancels
// the read (Ctrl-C).
var ErrCancelled = errors.New("cancelled")

// rlReadHidden is tai.term.read_hidden with rl's escape watch paused, so
// a value typed during a turn (a server's form) reaches the read, never
// the watch's keys for the next line.
func (h *Host) rlReadHidden(L *glua.LState) int {
	r := checkRL(L)
	r.esc.pause()
	defer r.esc.resume()
	return h.hidden(L, L.CheckString(2))
}

func (h *Host) readHidden(L *glua.LState) int {
	return h.hidden(L, L.CheckString(1))
}

func (h *Host) hidden(L *glua.LState, prompt string) int {
	if h.opts.ReadHidden == nil {
		return fail(L, "no terminal to read a hidden value from")
	}
	text, err := h.opts.ReadHidden(prompt)
	if errors.Is(err, ErrCancelled) {
		return fail(L, "interrupt")
	}
	if err != nil {
		return fail(L, err.Error())
	}
	L.Push(glua.LString(text))
	return 1
}

func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func (h *Host) isatty(L *glua.LState) int {
	var f any
	switch stream := L.OptString(1, "stdout"); stream {
	case "stdout":
		f = h.opts.Stdout
	case "stderr":
		f = h.opts.Stderr
	case "stdin":
		f = h.opts.Stdin
	default:
		L.ArgError(1, "stream must be \"stdout\", \"stderr\" or \"stdin\", not "+stream)
	}
	L.Push(glua.LBool(isTerminal(f)))
	return 1
}

// MaxStdin bounds what tai.term.read_stdin reads (tai -p with piped input).
const MaxStdin = 8 << 20

func (h *Host) readStdin(L *glua.LState) int {
	b, err := io.ReadAll(io.LimitReader(h.opts.Stdin, MaxStdin+1))
	if err != nil {
		return fail(L, "reading stdin: "+err.Error())
	}
	if len(b) > MaxStdin {
		return fail(L, fmt.Sprintf("stdin holds more than %d bytes; pass a smaller input, or point the model at a file instead", MaxStdin))
	}
	L.Push(glua.LString(b))
	return 1
}

// width is tai.term.width([stream]): the columns of the terminal stream
// ("stdout" or "stderr") is, 0 when it is not a terminal.
func (h *Host) width(L *glua.LState) int {
	w := h.opts.Stdout
	if L.OptString(1, "stdout") == "stderr" {
		w = h.opts.Stderr
	}
	L.Push(glua.LNumber(termWidth(w)))
	return 1
}

func (h *Host) ewrite(L *glua.LState) int {
	io.WriteString(h.opts.Stderr, L.CheckString(1))
	return 0
}

func (h *Host) color(L *glua.LState) int {
	L.Push(glua.LBool(os.Getenv("NO_COLOR") == "" && isTerminal(h.opts.Stdout)))
	return 1
}

func (h *Host) write(L *glua.LState) int {
	io.WriteString(h.opts.Stdout, L.CheckString(1))
	return 0
}

// notify is tai.notify(text [, level]), the default way tai tells the
// person something: "info" (the default) on stdout, "warn" and "error" on
// stderr, red when colour is on. The REPL says everything through
// tai.notify, so a function of one's own put there (init.lua) receives
// every notice and refusal, as Neovim's vim.notify does.
func (h *Host) notify(L *glua.LState) int {
	text := L.CheckString(1)
	switch level := L.OptString(2, "info"); level {
	case "info":
		io.WriteString(h.opts.Stdout, text+"\n")
	case "warn", "error":
		if os.Getenv("NO_COLOR") == "" && isTerminal(h.opts.Stdout) {
			text = "\x1b[31m" + text + "\x1b[0m"
		}
		w := h.opts.Stderr
		if r := h.term.editor; r != nil && !r.closed {
			// through the line editor, which draws a line being edited
			// again below it
			w = r.inst.Stderr()
		}
		io.WriteString(w, text+"\n")
	default:
		L.ArgError(2, fmt.Sprintf(`level is "info", "warn" or "error", not %q`, level))
	}
	return 0
}

func (h *Host) warn(L *glua.LState) int {
	io.WriteString(h.opts.Stderr, L.CheckString(1)+"\n")
	return 0
}

func (h *Host) historyFile(L *glua.LState) int {
	L.Push(glua.LString(filepath.Join(h.opts.StateDir, "history")))
	return 1
}

func (h *Host) protect(L *glua.LState) int {
	fn := L.CheckFunction(1)
	args := make([]glua.LValue, 0, L.GetTop()-1)
	for i := 2; i <= L.GetTop(); i++ {
		args = append(args, L.Get(i))
	}
	parent := L.Context()
	if parent == nil {
		parent = context.Background()
	}
	top := L.GetTop()
	skip := len(stackFrames(L)) // this function and its callers
	err := h.interruptible(parent, func() error {
		return L.CallByParam(glua.P{Fn: fn, NRet: glua.MultRet, Protect: true, Handler: tracebackHandler(L, skip)}, args...)
	})
	if err != nil {
		L.SetTop(top)
		L.Push(glua.LFalse)
		L.Push(glua.LString(err.Error()))
		return 2
	}
	n := L.GetTop() - top
	L.Insert(glua.LTrue, top+1)
	return n + 1
}

func (h *Host) luaInterrupt(L *glua.LState) int {
	L.Push(glua.LBool(h.Interrupt()))
	return 1
}

func luaClean(L *glua.LState) int {
	L.Push(glua.LString(CleanText(L.CheckString(1), glua.LVAsBool(L.Get(2)))))
	return 1
}

func luaFold(L *glua.LState) int {
	shown, note := screen.Fold(L.CheckString(1), L.CheckInt(2), L.CheckInt(3))
	L.Push(glua.LString(shown))
	L.Push(glua.LString(note))
	return 2
}

func luaWords(L *glua.LState) int {
	list := L.CheckTable(1)
	var words []string
	for i := 1; i <= list.Len(); i++ {
		v := list.RawGetInt(i)
		if v.Type() != glua.LTString && v.Type() != glua.LTNumber {
			L.ArgError(1, fmt.Sprintf("word %d is a %s, not a string", i, v.Type()))
		}
		words = append(words, v.String())
	}
	out := L.NewTable()
	for _, line := range screen.ShowWords(words, L.OptInt(2, 0)) {
		out.Append(glua.LString(line))
	}
	L.Push(out)
	return 1
}

// CleanText returns s made safe to write to a terminal (see screen.Visible):
// newline and tab are kept unless oneline is true (screen.VisibleLine). Text
// from a model, a tool or a server goes through it before it is shown.
func CleanText(s string, oneline bool) string {
	if oneline {
		return screen.VisibleLine(s)
	}
	return screen.Visible(s)
}

// rl is the Lua-side readline handle. Completion runs on the goroutine that
// owns the Lua state: the readline goroutine asks through reqs.
type rl struct {
	inst     *readline.Instance
	paste    *pasteFilter  // between the terminal and the editor
	inject   *injectReader // under paste: types for the person (a login's end)
	out      io.Writer     // where the editor draws; bracketed paste is switched on it
	bracket  bool          // out is a terminal: bracketed paste is used
	pasteOn  bool          // bracketed paste was switched on and not off since
	complete *glua.LFunction
	reqs     chan completeReq
	closed   bool
	esc      escapeWatch // rl:watch_escape
}

type completeReq struct {
	line  string // text before the cursor
	reply chan []string
}

// completer adapts rl's Lua completion to readline.AutoCompleter.
type completer struct{ reqs chan completeReq }

// Do implements readline.AutoCompleter: it sends the text before the cursor
// to the Lua goroutine and turns the whole-word candidates into suffixes.
func (c completer) Do(line []rune, pos int) ([][]rune, int) {
	before := string(line[:pos])
	req := completeReq{line: before, reply: make(chan []string, 1)}
	c.reqs <- req
	cands := <-req.reply
	word := lastWord(before)
	var out [][]rune
	for _, cand := range cands {
		if strings.HasPrefix(cand, word) {
			out = append(out, []rune(cand[len(word):]))
		}
	}
	return out, utf8.RuneCountInString(word)
}

func (h *Host) newReadline(L *glua.LState) int {
	opts := L.OptTable(1, L.NewTable())
	history := ""
	if s, ok := opts.RawGetString("history").(glua.LString); ok {
		history = string(s)
	}
	inj := newInjectReader(readline.NewCancelableStdin(readline.Stdin))
	r := &rl{reqs: make(chan completeReq), inject: inj, paste: newPasteFilter(inj)}
	if fn, ok := opts.RawGetString("complete").(*glua.LFunction); ok {
		r.complete = fn
	}
	if history != "" {
		if err := privateFile(history); err != nil {
			h.tell(L, "warn", fmt.Sprintf("tai: history is off: %v", err))
			history = ""
		}
	}
	cfg := &readline.Config{
		Stdin:                  r.paste,
		Painter:                painter{},
		HistoryFile:            history,
		DisableAutoSaveHistory: true,
		HistoryLimit:           1000,
		InterruptPrompt:        "^C",
		EOFPrompt:              "",
	}
	if r.complete != nil {
		cfg.AutoComplete = completer{reqs: r.reqs}
	}
	r.out = os.Stdout
	switch out := opts.RawGetString("output"); out {
	case glua.LNil, glua.LString("stdout"):
	case glua.LString("stderr"):
		cfg.Stdout = os.Stderr
		r.out = os.Stderr
	default:
		L.ArgError(1, "output must be \"stdout\" or \"stderr\"")
	}
	r.bracket = isTerminal(r.out) && isTerminal(os.Stdin)
	inst, err := readline.NewEx(cfg)
	if err != nil {
		return fail(L, "readline: "+err.Error())
	}
	r.inst = inst
	h.term.editor = r
	ud := L.NewUserData()
	ud.Value = r
	L.SetMetatable(ud, L.GetTypeMetatable(readlineType))
	L.Push(ud)
	return 1
}

// privateFile makes sure path exists and only its owner can read it (the
// line editor would create it world-readable): history may hold what
// was typed, and is written only after redaction, but stays private.
func privateFile(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return f.Chmod(st.Mode().Perm() &^ 0o077)
	}
	return nil
}

func checkRL(L *glua.LState) *rl {
	ud := L.CheckUserData(1)
	r, ok := ud.Value.(*rl)
	if !ok {
		L.ArgError(1, "readline handle expected")
	}
	if r.closed {
		L.ArgError(1, "the readline handle is closed")
	}
	return r
}

type readResult struct {
	line string
	err  error
}

func (h *Host) rlRead(L *glua.LState) int {
	r := checkRL(L)
	r.esc.pause()
	defer r.esc.resume()
	prompt := L.OptString(2, "> ")
	if opts := L.OptTable(3, nil); opts != nil && glua.LVAsBool(opts.RawGetString("escape")) {
		r.paste.cancelOnEscape(true)
		defer r.paste.cancelOnEscape(false)
	}
	if h.prompter.granting {
		// A question that grants something, with stdin not a terminal:
		// the answer comes from /dev/tty, never from the pipe.
		if h.prompter.tty == nil {
			h.prompter.untold = true // the denial says why (see hostPrompter)
			return fail(L, "eof")
		}
		line, err := readGrantLine(L, h.prompter.tty, prompt)
		switch {
		case err == nil:
			L.Push(glua.LString(line))
			return 1
		case err.Error() == "interrupt":
			return fail(L, "interrupt")
		}
		return fail(L, "eof")
	}
	r.inst.SetPrompt(prompt)
	if r.bracket && !r.pasteOn {
		// A paste arrives whole, however many lines it holds, also one
		// made while a turn runs (it waits for the next read). The mode
		// goes off with rl:close() and rl:suspend().
		io.WriteString(r.out, bracketOn)
		r.pasteOn = true
	}
	done := make(chan readResult, 1)
	go func() {
		line, err := r.inst.Readline()
		done <- readResult{line, err}
	}()
	for {
		select {
		case res := <-done:
			switch {
			case res.err == nil:
				text, more := fromEditor(r.paste.expand(res.line))
				L.Push(glua.LString(text))
				if more {
					L.Push(glua.LString("more"))
					return 2
				}
				return 1
			case errors.Is(res.err, readline.ErrInterrupt):
				return fail(L, "interrupt")
			case errors.Is(res.err, io.EOF):
				return fail(L, "eof")
			default:
				return fail(L, "readline: "+res.err.Error())
			}
		case req := <-r.reqs:
			req.reply <- h.runComplete(L, r.complete, req.line)
		case <-h.notices.ready:
			// said above the line being edited, which is drawn again
			h.flushNotices()
		}
	}
}

// lastWord is the word before the cursor that completion replaces.
func lastWord(before string) string {
	if i := strings.LastIndexAny(before, " \t"); i >= 0 {
		return before[i+1:]
	}
	return before
}

// completionsShown caps the candidates Tab shows at once.
const completionsShown = 200

// runComplete calls the Lua completion function; an error in it yields no
// candidates rather than breaking the line being edited. Every candidate
// the line editor gets comes through here, whatever its source (a
// server's URIs, names, argument completions): one holding a control
// character is dropped (it would reach the terminal raw, and cannot be
// typed back anyway), and at most completionsShown are shown, with a
// line saying what was left out.
func (h *Host) runComplete(L *glua.LState, fn *glua.LFunction, line string) []string {
	out, dropped := h.callComplete(L, fn, line)
	word := lastWord(line)
	kept := out[:0]
	for _, c := range out {
		if strings.HasPrefix(c, word) {
			kept = append(kept, c)
		}
	}
	out = kept
	if dropped > 0 {
		h.sayAboveLine(L, fmt.Sprintf("(%d %s not offered: %s control characters)", dropped, plural(dropped, "completion", "completions"), plural(dropped, "it holds", "they hold")))
	}
	if len(out) <= completionsShown {
		return out
	}
	// What all have in common is still typed for the person; only a
	// list that can go no further is cut.
	if common := commonPrefix(out); len(common) > len(word) {
		return []string{common}
	}
	h.sayAboveLine(L, fmt.Sprintf("(… %d more completions: type more to narrow them)", len(out)-completionsShown))
	return spread(out, len(word), completionsShown)
}

// spread picks n of cands (which share only their first at bytes), taking
// in turn from each group sharing the next byte, in their order: the line
// editor completes what the candidates it is given share, so they must
// share no more than all do.
func spread(cands []string, at, n int) []string {
	var groups [][]string
	index := map[string]int{}
	for _, c := range cands {
		key := c[at:min(at+1, len(c))]
		i, ok := index[key]
		if !ok {
			i = len(groups)
			index[key] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], c)
	}
	longest := 0
	for _, g := range groups {
		longest = max(longest, len(g))
	}
	picked := map[string]bool{}
	for round := 0; round < longest && len(picked) < n; round++ {
		for _, g := range groups {
			if round < len(g) && len(picked) < n {
				picked[g[round]] = true
			}
		}
	}
	out := make([]string, 0, n)
	for _, c := range cands {
		if picked[c] {
			out = append(out, c)
		}
	}
	return out
}

// sayAboveLine says text on a line of its own above the line being
// edited (drawn again below it), or as a notice when none is.
func (h *Host) sayAboveLine(L *glua.LState, text string) {
	if r := h.term.editor; r != nil && !r.closed {
		io.WriteString(r.inst.Stdout(), text+"\n")
		return
	}
	h.tell(L, "info", text)
}

// commonPrefix is the longest prefix of whole runes all of cands share.
func commonPrefix(cands []string) string {
	p := cands[0]
	for _, c := range cands[1:] {
		n := 0
		for n < len(p) && n < len(c) && p[n] == c[n] {
			n++
		}
		p = p[:n]
	}
	for len(p) > 0 && !utf8.ValidString(p) {
		p = p[:len(p)-1]
	}
	return p
}

// typable reports whether s holds no control character (and is UTF-8).
func typable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// callComplete calls fn and returns the string candidates it gave that
// can be typed, and how many it gave that cannot.
func (h *Host) callComplete(L *glua.LState, fn *glua.LFunction, line string) (out []string, dropped int) {
	top := L.GetTop()
	defer L.SetTop(top)
	if err := L.CallByParam(glua.P{Fn: fn, NRet: 1, Protect: true}, glua.LString(line)); err != nil {
		return nil, 0
	}
	t, ok := L.Get(-1).(*glua.LTable)
	if !ok {
		return nil, 0
	}
	for i := 1; i <= t.Len(); i++ {
		if s, ok := t.RawGetInt(i).(glua.LString); ok {
			if !typable(string(s)) {
				dropped++
				continue
			}
			out = append(out, string(s))
		}
	}
	return out, dropped
}

func rlAddHistory(L *glua.LState) int {
	r := checkRL(L)
	line := toEditor(L.CheckString(2))
	if err := r.inst.SaveHistory(line); err != nil {
		return fail(L, "history: "+err.Error())
	}
	L.Push(glua.LTrue)
	return 1
}

// pasteOff switches bracketed paste off if rlRead switched it on.
func (r *rl) pasteOff() {
	if r.pasteOn {
		io.WriteString(r.out, bracketOff)
		r.pasteOn = false
	}
}

// rlSuspend is rl:suspend(): bracketed paste goes off until the next
// read, for a program that takes over the terminal (a !command).
func rlSuspend(L *glua.LState) int {
	checkRL(L).pasteOff()
	return 0
}

// rlWatchEscape is rl:watch_escape(on). While on, the terminal hands each
// key over as it is typed (no line editing or echo; Ctrl-C still
// interrupts) and escWatch reads it: an Esc pressed alone stops the
// running command (Host.interrupt), as Ctrl-C does; other keys typed
// meanwhile go to the editor's next read, as they did before.
func (h *Host) rlWatchEscape(L *glua.LState) int {
	r := checkRL(L)
	on := L.ToBool(2)
	f, ok := h.opts.Stdin.(*os.File)
	if !ok || !isTerminal(f) {
		return 0
	}
	if !on {
		r.unwatch()
		return 0
	}
	r.esc.on(int(f.Fd()), func() { h.interrupt() })
	return 0
}

// unwatch ends rl:watch_escape, handing the keys typed meanwhile to the
// editor (an Enter as the LF a line typed ahead always gave it).
func (r *rl) unwatch() {
	if typed := r.esc.off(); len(typed) > 0 {
		r.inject.Inject(bytes.ReplaceAll(typed, []byte("\r"), []byte("\n")))
	}
}

// escapeWatch is the state of rl:watch_escape, every part of it in one
// place: off; on, with the terminal handing over each key and an escWatch
// reading it; or on and paused while a question reads the terminal
// (rl:key, rl:read, rl:discard). Owner goroutine only.
type escapeWatch struct {
	fd int
	// cooked is the terminal's mode from before on, which off restores;
	// nil when off.
	cooked *unix.Termios
	// watch reads the terminal; nil when off or paused.
	watch *escWatch
	esc   func() // what an Esc pressed alone does
}

// on puts the terminal fd in key mode (no line editing or echo; Ctrl-C
// still interrupts) and watches it, esc called for an Esc pressed alone.
// Already on, or the terminal's mode out of reach, it does nothing.
func (w *escapeWatch) on(fd int, esc func()) {
	if w.cooked != nil {
		return
	}
	saved, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return
	}
	keys := *saved
	keys.Lflag &^= unix.ICANON | unix.ECHO
	keys.Iflag &^= unix.ICRNL
	keys.Cc[unix.VMIN], keys.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &keys); err != nil {
		return
	}
	w.fd, w.cooked, w.esc = fd, saved, esc
	w.watch = startEscWatch(fd, esc)
}

// off stops the watch, restores the terminal's mode and returns the keys
// typed meanwhile (none when it was off or paused).
func (w *escapeWatch) off() []byte {
	if w.cooked == nil {
		return nil
	}
	var typed []byte
	if w.watch != nil {
		typed = w.watch.stop()
	}
	unix.IoctlSetTermios(w.fd, unix.TCSETS, w.cooked)
	*w = escapeWatch{}
	return typed
}

// pause stops reading the terminal while a question reads it: keys typed
// before the question are dropped, as the question drops them.
func (w *escapeWatch) pause() {
	if w.watch != nil {
		w.watch.stop()
		w.watch = nil
	}
}

// resume goes on reading after pause, when the watch is still on.
func (w *escapeWatch) resume() {
	if w.cooked != nil && w.watch == nil {
		w.watch = startEscWatch(w.fd, w.esc)
	}
}

// escWatch reads the terminal fd until stopped: an Esc that arrives alone
// (a key's escape sequence arrives in one read) calls esc; everything
// else is kept.
type escWatch struct {
	fd           int
	wakeR, wakeW *os.File
	done         chan struct{}
	typed        []byte // owned by run until done is closed
}

func startEscWatch(fd int, esc func()) *escWatch {
	w := &escWatch{fd: fd, done: make(chan struct{})}
	var err error
	if w.wakeR, w.wakeW, err = os.Pipe(); err != nil {
		close(w.done)
		return w
	}
	go w.run(esc)
	return w
}

func (w *escWatch) run(esc func()) {
	defer close(w.done)
	buf := make([]byte, 256)
	wake := int32(w.wakeR.Fd())
	for {
		fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}, {Fd: wake, Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return
		}
		if fds[1].Revents != 0 || fds[0].Revents&unix.POLLIN == 0 {
			return // stopped, or the terminal is gone
		}
		n, err := unix.Read(w.fd, buf)
		if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
			continue
		}
		if err != nil || n <= 0 {
			return
		}
		if n == 1 && buf[0] == 0x1b {
			esc()
			continue
		}
		w.typed = append(w.typed, buf[:n]...)
		w.echo(buf[:n])
	}
}

// echo shows typed keys as the terminal would have: printable text, and
// Enter as a new line.
func (w *escWatch) echo(b []byte) {
	out := make([]byte, 0, len(b)+4)
	for _, c := range b {
		switch {
		case c == '\r':
			out = append(out, '\r', '\n')
		case c >= 0x20 && c != 0x7f:
			out = append(out, c)
		}
	}
	if len(out) > 0 {
		unix.Write(w.fd, out)
	}
}

// stop ends the watch and returns the keys it kept.
func (w *escWatch) stop() []byte {
	if w.wakeW != nil {
		w.wakeW.Write([]byte{0})
	}
	<-w.done
	if w.wakeW != nil {
		w.wakeW.Close()
		w.wakeR.Close()
	}
	return w.typed
}

func (h *Host) rlClose(L *glua.LState) int {
	ud := L.CheckUserData(1)
	if r, ok := ud.Value.(*rl); ok && !r.closed {
		r.unwatch()
		r.closed = true
		r.pasteOff()
		// The editor's own Close does not reach its input, and waits for
		// a reader that may be blocked in it (an EOF typed ahead while a
		// command ran): end that read first.
		r.paste.Close()
		r.inst.Close()
	}
	return 0
}
