package lua

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
)

// The line editor edits one line. Multi-line input reaches it as one line
// holding these private-use characters, which the Lua side never sees:
// rlRead turns them back into newlines and tabs.
const (
	// markNewline stands for a newline inside a bracketed paste.
	markNewline = '\uE00A'
	// markTab stands for a tab inside a bracketed paste (a typed tab
	// completes).
	markTab = '\uE009'
	// markMore ends a line the person ended with Ctrl-J or Alt-Enter: the
	// message goes on on the next line.
	markMore = '\uE00D'
)

// Bracketed paste (xterm; every common terminal): while it is on, a paste
// arrives between pasteStart and pasteEnd.
const (
	bracketOn  = "\x1b[?2004h"
	bracketOff = "\x1b[?2004l"
	pasteStart = "\x1b[200~"
	pasteEnd   = "\x1b[201~"
)

// pasteFilter sits between the terminal and the line editor. Inside a
// bracketed paste it turns newlines (CR, LF or CRLF) and tabs into marks
// and drops other control characters, so a paste is one line whatever it
// holds; outside one, Ctrl-J (LF) and Alt-Enter (ESC CR) become markMore
// followed by Enter (see filter). Everything else passes through
// unchanged.
type pasteFilter struct {
	in io.ReadCloser

	mu      sync.Mutex
	pending []byte // read from in, not yet filtered (an incomplete escape)
	out     []byte // filtered, not yet handed out
	inPaste bool
	paste   []byte            // the bracketed paste being read, filtered
	pastes  map[string]string // placeholder -> the long paste it stands for
	lastCR  bool              // inside a paste, the last byte was CR (so LF is its pair)
	// escCancels makes an Esc pressed alone (an ESC read by itself) a
	// Ctrl-C: the line being read is cancelled (rl:read's escape option).
	escCancels bool
	err        error
}

// cancelOnEscape switches escCancels.
func (p *pasteFilter) cancelOnEscape(on bool) {
	p.mu.Lock()
	p.escCancels = on
	p.mu.Unlock()
}

func newPasteFilter(in io.ReadCloser) *pasteFilter { return &pasteFilter{in: in} }

// Read implements io.Reader.
func (p *pasteFilter) Read(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.out) == 0 {
		if p.err != nil {
			if len(p.pending) > 0 { // an ESC left waiting at the end
				p.out, p.pending = p.pending, nil
				break
			}
			return 0, p.err
		}
		buf := make([]byte, 4096)
		n, err := p.in.Read(buf)
		p.pending = append(p.pending, buf[:n]...)
		p.err = err
		p.filter(n == 1)
	}
	n := copy(b, p.out)
	p.out = p.out[n:]
	return n, nil
}

// Close implements io.Closer.
func (p *pasteFilter) Close() error { return p.in.Close() }

// discard drops the text read from the terminal and not yet handed to the
// editor: keys typed ahead of a question (see rlKey). A read in progress
// holds what it has; nothing waits for it.
func (p *pasteFilter) discard() {
	if !p.mu.TryLock() {
		return
	}
	p.out = nil
	p.mu.Unlock()
}

// filter moves what it can from pending to out, keeping an escape
// sequence that may still grow into a paste marker or Alt-Enter.
//
// lone says the bytes came in a read of one byte. Only a lone LF is
// Ctrl-J: a line typed ahead while the terminal was not in raw mode (a
// turn running) reaches the editor whole, its Enter turned into LF by
// the terminal, and must stay an Enter.
func (p *pasteFilter) filter(lone bool) {
	in := p.pending
	// unbracketed: the bytes hold no bracketed paste, so an Enter with more
	// text after it in the same read was pasted, not pressed.
	unbracketed := !p.inPaste && !bytes.Contains(in, []byte("\x1b[20"))
	// pasted: such an Enter is there, so a tab in these bytes is text too
	// (typed, it would complete).
	pasted := false
	if unbracketed {
		if k := bytes.IndexByte(in, '\r'); k >= 0 && k+1 < len(in) && in[k+1] != '\x1b' {
			pasted = true
		}
	}
	i := 0
	for i < len(in) {
		c := in[i]
		if c == 0x1b {
			rest := in[i:]
			if len(rest) == 1 && lone && !p.inPaste && p.escCancels {
				p.out = append(p.out, 3) // Esc pressed alone: Ctrl-C
				i++
				continue
			}
			if p.inPaste && hasPrefixOrPartial(rest, pasteEnd) || !p.inPaste && hasPrefixOrPartial(rest, pasteStart) {
				marker := pasteStart
				if p.inPaste {
					marker = pasteEnd
				}
				if len(rest) < len(marker) {
					break // wait for the rest of it
				}
				p.inPaste = !p.inPaste
				p.lastCR = false
				i += len(marker)
				if p.inPaste {
					p.paste = p.paste[:0]
				} else {
					p.out = append(p.out, p.collapse(p.paste)...)
				}
				continue
			}
			if !p.inPaste {
				if len(rest) == 1 {
					break // ESC alone: wait for what follows
				}
				if rest[1] == '\r' || rest[1] == '\n' {
					p.out = append(p.out, string(markMore)+"\r"...)
					i += 2
					continue
				}
				p.out = append(p.out, c)
				i++
				continue
			}
			i++ // a stray escape inside a paste is dropped
			continue
		}
		if p.inPaste {
			switch {
			case c == '\n' && p.lastCR:
				// the LF of a CRLF pair already counted
			case c == '\r' || c == '\n':
				p.paste = append(p.paste, string(markNewline)...)
			case c == '\t':
				p.paste = append(p.paste, string(markTab)...)
			case c < 0x20 || c == 0x7f:
				// other controls in a paste would act as editing keys
			default:
				p.paste = append(p.paste, c)
			}
			p.lastCR = c == '\r'
			i++
			continue
		}
		switch {
		case c == '\n' && lone && len(in) == 1:
			p.out = append(p.out, string(markMore)+"\r"...)
		case c == '\t' && pasted:
			p.out = append(p.out, string(markTab)...)
		case c == '\r' && i+1 < len(in) && unbracketed && in[i+1] != '\x1b':
			// More text after an Enter in the same read is a paste from a
			// terminal that does not bracket it (nobody types that fast):
			// the Enter is a newline of the message, as in a bracketed
			// paste; only the last one sends it.
			p.out = append(p.out, string(markNewline)...)
			if in[i+1] == '\n' {
				i++
			}
		default:
			p.out = append(p.out, c)
		}
		i++
	}
	p.pending = append([]byte(nil), in[i:]...)
}

// A bracketed paste of more than collapseLines lines or collapseBytes
// bytes is shown as a placeholder ("[Pasted text #1 +40 lines]") that
// expand turns back into the paste when the line is sent.
const (
	collapseLines = 4
	collapseBytes = 2000
)

// collapse returns what the editor gets for the bracketed paste b: b
// itself, or a placeholder standing for it when it is long.
func (p *pasteFilter) collapse(b []byte) []byte {
	nl := []byte(string(markNewline))
	lines := bytes.Count(b, nl) + 1
	if bytes.HasSuffix(b, nl) {
		lines--
	}
	if lines <= collapseLines && len(b) <= collapseBytes {
		return append([]byte(nil), b...)
	}
	if p.pastes == nil {
		p.pastes = map[string]string{}
	}
	ph := fmt.Sprintf("[Pasted text #%d +%d lines]", len(p.pastes)+1, lines)
	p.pastes[ph] = string(b)
	return []byte(ph)
}

// expand puts the pastes back in for the placeholders line holds.
func (p *pasteFilter) expand(line string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.pastes) == 0 || !strings.Contains(line, "[Pasted text #") {
		return line
	}
	for ph, text := range p.pastes {
		line = strings.ReplaceAll(line, ph, text)
	}
	return line
}

// hasPrefixOrPartial reports whether s starts with marker, or is a
// beginning of it.
func hasPrefixOrPartial(s []byte, marker string) bool {
	if len(s) >= len(marker) {
		return bytes.HasPrefix(s, []byte(marker))
	}
	return strings.HasPrefix(marker, string(s))
}

// painter shows the marks: a paste's newlines as ↵ and its tabs as ⇥, one
// column each, as the marks themselves take.
type painter struct{}

// Paint implements readline.Painter.
func (painter) Paint(line []rune, _ int) []rune {
	out := line
	copied := false
	for i, r := range line {
		var show rune
		switch r {
		case markNewline:
			show = '↵'
		case markTab:
			show = '⇥'
		case markMore:
			show = ' '
		default:
			continue
		}
		if !copied {
			out = append([]rune(nil), line...)
			copied = true
		}
		out[i] = show
	}
	return out
}

// fromEditor turns a line from the editor into the text typed or pasted,
// and reports whether the person asked for a further line (Ctrl-J,
// Alt-Enter).
func fromEditor(line string) (text string, more bool) {
	if strings.HasSuffix(line, string(markMore)) {
		line, more = strings.TrimSuffix(line, string(markMore)), true
	}
	line = strings.ReplaceAll(line, string(markMore), "")
	line = strings.ReplaceAll(line, string(markNewline), "\n")
	line = strings.ReplaceAll(line, string(markTab), "\t")
	return line, more
}

// toEditor is the inverse of fromEditor for the history: a multi-line
// entry is kept as one line, its newlines and tabs as marks.
func toEditor(text string) string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\n", string(markNewline))
	return strings.ReplaceAll(text, "\t", string(markTab))
}
