package lua

import (
	"regexp"
	"sort"
	"strings"

	glua "github.com/yuin/gopher-lua"
)

// command is one REPL command added with tai.command.
type command struct {
	name     string
	fn       *glua.LFunction
	help     string
	complete *glua.LFunction // nil: no argument completion
}

var commandName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]{0,63}$`)

// openCommands installs the REPL command registry:
//
//	tai.command(name, fn, help [, complete])
//	    adds (or replaces) the REPL command /name. fn(rest, words) runs it
//	    with the text after the name and that text split on blanks;
//	    complete(word, line), when given, returns candidates for the word
//	    under the cursor.
//	tai.commands() -> {{name=, help=, fn=, complete=}, …} sorted by name
func (h *Host) openCommands(L *glua.LState, tai *glua.LTable) {
	tai.RawSetString("command", L.NewFunction(h.addCommand))
	tai.RawSetString("commands", L.NewFunction(h.listCommands))
}

func (h *Host) addCommand(L *glua.LState) int {
	name := strings.TrimPrefix(L.CheckString(1), "/")
	fn := L.CheckFunction(2)
	help := L.OptString(3, "")
	var complete *glua.LFunction
	if L.GetTop() >= 4 && L.Get(4) != glua.LNil {
		complete = L.CheckFunction(4)
	}
	if !commandName.MatchString(name) {
		L.ArgError(1, "command names start with a letter and use letters, digits, '-', '_' or '.' (at most 64)")
	}
	h.commands[name] = &command{name: name, fn: fn, help: help, complete: complete}
	return 0
}

func (h *Host) listCommands(L *glua.LState) int {
	names := make([]string, 0, len(h.commands))
	for n := range h.commands {
		names = append(names, n)
	}
	sort.Strings(names)
	out := L.NewTable()
	for _, n := range names {
		c := h.commands[n]
		t := L.NewTable()
		t.RawSetString("name", glua.LString(c.name))
		t.RawSetString("help", glua.LString(c.help))
		t.RawSetString("fn", c.fn)
		if c.complete != nil {
			t.RawSetString("complete", c.complete)
		}
		out.Append(t)
	}
	L.Push(out)
	return 1
}

// Commands returns the names of the REPL commands added so far, sorted.
func (h *Host) Commands() []string {
	names := make([]string, 0, len(h.commands))
	for n := range h.commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
