package lua

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	glua "github.com/yuin/gopher-lua"

	"tai/engine/tool"
	"tai/vault"
)

// openPermissions installs tai.permissions, the rules kept in the vault
// for a project folder: calls they cover run without a consent question
// in that folder. The REPL's consent screen keeps one with [p]; served
// sessions never read them. dir defaults to tai.cwd().
//
//	tai.permissions.list([dir]) -> {{dir=, tool=, prefix=, sandbox=, created=}, …} | nil, err
//	    dir = "*" lists every folder's; sandbox = false marks a rule
//	    whose commands run outside the sandbox
//	tai.permissions.add{tool=, prefix=, sandbox=, dir=} -> true [, note] | nil, err
//	    prefix (the shell tool only): the command's first words ("git
//	    status"); without it every call of tool is covered. sandbox =
//	    false (a shell rule with a prefix only) also runs the commands it
//	    covers outside the shell's sandbox, and the note then says that
//	    the rule trusts what the model can write in the folder; adding the
//	    rule again with another sandbox replaces it
//	tai.permissions.remove{tool=, prefix=, dir=} -> true | nil, err
//	    (a row of list may be passed as it is)
//	tai.permissions.allows(consent [, rule]) -> rule | nil
//	    the rule that covers consent ({tool=, origin=, args=}, as
//	    tai.prompter's confirm gets it) in tai.cwd(); with rule ({tool=,
//	    prefix=}), whether that rule would
//	tai.permissions.suggest(consent) -> prefix | nil
//	    the prefix a rule for this shell call would keep ("git status"),
//	    nil when no rule can cover it (a shell operator, a variable, …)
func (h *Host) openPermissions(L *glua.LState, tai *glua.LTable) {
	tai.RawSetString("permissions", L.SetFuncs(L.NewTable(), map[string]glua.LGFunction{
		"list":   h.permissionList,
		"add":    func(L *glua.LState) int { return h.permissionChange(L, true) },
		"remove": func(L *glua.LState) int { return h.permissionChange(L, false) },
		"allows": h.permissionAllows,
		"suggest": func(L *glua.LState) int {
			if p, ok := tool.SuggestPrefix(consentArg(L, 1)); ok {
				L.Push(glua.LString(p))
				return 1
			}
			L.Push(glua.LNil)
			return 1
		},
	}))
}

// projectDir is the folder rules are kept for: dir when given, else the
// tools' working directory; absolute and clean.
func (h *Host) projectDir(dir string) (string, error) {
	if dir == "" {
		if o := h.opts.Engine; o != nil && o.Dir != "" {
			dir = o.Dir
		} else {
			wd, err := os.Getwd()
			if err != nil {
				return "", err
			}
			dir = wd
		}
	}
	return filepath.Abs(dir)
}

func permissionTable(L *glua.LState, p vault.Permission) *glua.LTable {
	t := L.NewTable()
	t.RawSetString("dir", glua.LString(p.Dir))
	t.RawSetString("tool", glua.LString(p.Tool))
	if p.Prefix != "" {
		t.RawSetString("prefix", glua.LString(p.Prefix))
	}
	if p.Unsandboxed {
		t.RawSetString("sandbox", glua.LFalse)
	}
	t.RawSetString("created", timeString(p.Created))
	return t
}

func (h *Host) permissionList(L *glua.LState) int {
	dir := L.OptString(1, "")
	if dir != "*" {
		var err error
		if dir, err = h.projectDir(dir); err != nil {
			return fail(L, err.Error())
		}
	} else {
		dir = ""
	}
	return h.withVault(L, func(s *vault.Store) int {
		list, err := s.PermissionList(dir)
		if err != nil {
			return fail(L, err.Error())
		}
		out := NewArray(L)
		for _, p := range list {
			out.Append(permissionTable(L, p))
		}
		L.Push(out)
		return 1
	})
}

func (h *Host) permissionChange(L *glua.LState, add bool) int {
	args := argsTable(L, 1, "arguments")
	checkFields(L, args, "tool", "prefix", "sandbox", "dir", "created")
	p := vault.Permission{Tool: fieldString(L, args, "tool", true), Prefix: fieldString(L, args, "prefix", false)}
	switch v := args["sandbox"].(type) {
	case nil:
	case bool:
		p.Unsandboxed = !v
	default:
		L.ArgError(1, fmt.Sprintf("sandbox is true (the default: the commands run in the sandbox) or false (they run outside it), not %v", v))
	}
	if p.Unsandboxed && add && (p.Tool != "shell" || p.Prefix == "") {
		return fail(L, "sandbox = false is for a shell rule with a prefix only: give the command's first words, prefix = \"git push\"")
	}
	dir, err := h.projectDir(fieldString(L, args, "dir", false))
	if err != nil {
		return fail(L, err.Error())
	}
	p.Dir = dir
	if p.Prefix != "" {
		if p.Tool != "shell" {
			return fail(L, "a prefix is for the shell tool only; a rule for "+CleanText(p.Tool, true)+" covers every call of it")
		}
		if err := tool.CheckPrefix(p.Prefix); err != nil && add {
			return fail(L, err.Error())
		}
		if words, ok := tool.CommandWords(p.Prefix); ok {
			p.Prefix = strings.Join(words, " ")
		}
	}
	return h.withVault(L, func(s *vault.Store) int {
		if add {
			err = s.PermissionAdd(p)
		} else {
			err = s.PermissionRemove(p)
		}
		if err != nil {
			if errors.Is(err, vault.ErrNotFound) {
				return fail(L, "no such rule for "+p.String()+"; tai.permissions.list() shows them")
			}
			return fail(L, err.Error())
		}
		L.Push(glua.LTrue)
		if add && p.Unsandboxed {
			L.Push(glua.LString(liftNote(p)))
			return 2
		}
		return 1
	})
}

// liftNote is what keeping a rule that lifts the sandbox says: what the
// model can write in the folder runs with the person's rights through it.
func liftNote(p vault.Permission) string {
	return "kept: the model's commands starting with " + CleanText(p.Prefix, true) + " run outside the sandbox in " + CleanText(p.Dir, true) +
		"; this trusts what the model can write there (scripts, Makefiles, package.json, .env), which they may run. " +
		"git's config and hooks are put back after each sandboxed command. /permissions removes the rule."
}

// consentArg reads a consent table ({tool=, origin=, args=}) at n.
func consentArg(L *glua.LState, n int) tool.Consent {
	t := L.CheckTable(n)
	c := tool.Consent{}
	if s, ok := t.RawGetString("tool").(glua.LString); ok {
		c.Tool = string(s)
	}
	if s, ok := t.RawGetString("origin").(glua.LString); ok {
		c.Origin = string(s)
	}
	if a, ok := t.RawGetString("args").(*glua.LTable); ok {
		v, err := FromLua(L, a)
		if err != nil {
			L.ArgError(n, "args: "+err.Error())
		}
		c.Args, _ = v.(map[string]any)
	}
	return c
}

func (h *Host) permissionAllows(L *glua.LState) int {
	c := consentArg(L, 1)
	dir, err := h.projectDir("")
	if err != nil {
		return fail(L, err.Error())
	}
	if t := L.OptTable(2, nil); t != nil {
		// A rule not kept yet: would it cover c?
		rule := vault.Permission{Dir: dir}
		if s, ok := t.RawGetString("tool").(glua.LString); ok {
			rule.Tool = string(s)
		}
		if s, ok := t.RawGetString("prefix").(glua.LString); ok {
			rule.Prefix = string(s)
		}
		if _, ok := tool.PermissionAllows([]vault.Permission{rule}, dir, c); ok {
			L.Push(permissionTable(L, rule))
			return 1
		}
		L.Push(glua.LNil)
		return 1
	}
	return h.withVault(L, func(s *vault.Store) int {
		list, err := s.PermissionList(dir)
		if err != nil {
			return fail(L, err.Error())
		}
		p, ok := tool.PermissionAllows(list, dir, c)
		if !ok {
			L.Push(glua.LNil)
			return 1
		}
		L.Push(permissionTable(L, p))
		return 1
	})
}
