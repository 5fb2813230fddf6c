package lua

import (
	"fmt"
	"path/filepath"
	"strings"

	glua "github.com/yuin/gopher-lua"

	"tai/stdlib"
)

// UserHelpDir returns the folder whose NAME.txt files replace or add help
// topics (see stdlib.Topics), or "" when the host runs clean.
func (h *Host) UserHelpDir() string {
	if h.opts.Clean {
		return ""
	}
	return HelpDir(h.opts.ConfigDir)
}

// HelpDir returns the help folder of the config folder dir: dir/help.
func HelpDir(dir string) string { return filepath.Join(dir, "help") }

// openHelp installs the manual:
//
//	tai.help.topics() -> {{name=, summary=, path=}, …} | nil, err
//	tai.help.topic(name) -> text | nil, err
//	tai.help.search(word) -> {{topic=, line=, text=}, …} | nil, err
func (h *Host) openHelp(L *glua.LState, tai *glua.LTable) {
	tai.RawSetString("help", L.SetFuncs(L.NewTable(), map[string]glua.LGFunction{
		"topics": h.helpTopics,
		"topic":  h.helpTopic,
		"search": h.helpSearch,
	}))
}

func (h *Host) helpTopics(L *glua.LState) int {
	topics, err := stdlib.Topics(h.UserHelpDir())
	if err != nil {
		return fail(L, err.Error())
	}
	out := L.CreateTable(len(topics), 0)
	for _, t := range topics {
		row := L.NewTable()
		row.RawSetString("name", glua.LString(t.Name))
		row.RawSetString("summary", glua.LString(t.Summary))
		row.RawSetString("path", glua.LString(t.Path))
		out.Append(row)
	}
	L.Push(out)
	return 1
}

func (h *Host) helpTopic(L *glua.LState) int {
	name := strings.TrimSpace(L.CheckString(1))
	topics, err := stdlib.Topics(h.UserHelpDir())
	if err != nil {
		return fail(L, err.Error())
	}
	for _, t := range topics {
		if t.Name == name {
			L.Push(glua.LString(t.Text))
			return 1
		}
	}
	return fail(L, fmt.Sprintf("no help topic %q", name))
}

func (h *Host) helpSearch(L *glua.LState) int {
	word := L.CheckString(1)
	topics, err := stdlib.Topics(h.UserHelpDir())
	if err != nil {
		return fail(L, err.Error())
	}
	out := L.NewTable()
	for _, m := range stdlib.Search(topics, word) {
		row := L.NewTable()
		row.RawSetString("topic", glua.LString(m.Topic))
		row.RawSetString("line", glua.LNumber(m.Line))
		row.RawSetString("text", glua.LString(m.Text))
		out.Append(row)
	}
	L.Push(out)
	return 1
}
