package main

import (
	"os"
	"strings"
	"testing"

	"tai/engine/llm/llmtest"
)

// TestProjectRuleForAShellPrefix: [p] at the consent screen keeps a rule
// for "git status" in this folder; the next session runs "git status
// --short" without asking, still asks for "git status; id", and
// /permissions lists and removes the rule.
func TestProjectRuleForAShellPrefix(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(fromToolResults)

	s := startREPLIn(t, e.root, e.modelVars(srv))
	s.expect("tai:default> ")
	srv.Push(llmtest.Calls(llmtest.Call("shell", `{"command":"git status"}`)))
	s.typeKeys("what changed?\r")
	s.expect("[s]how everything: ")
	s.typeKeys("p")
	s.expect("starts with: git status (Enter keeps that")
	s.typeKeys("\r")
	s.expect("run without asking in this folder from now on")
	s.expect("tai:default> ")
	s.typeKeys("/quit\r")
	s.wait()

	s = startREPLIn(t, e.root, e.modelVars(srv))
	s.expect("tai:default> ")
	srv.Push(llmtest.Calls(llmtest.Call("shell", `{"command":"git status --short"}`)))
	s.typeKeys("and now?\r")
	s.expect("the tool said")
	s.expect("tai:default> ")
	if strings.Contains(s.seen.String(), "wants to run") {
		t.Fatalf("git status --short was asked about despite the rule:\n%s", s.seen.String())
	}
	srv.Push(llmtest.Calls(llmtest.Call("shell", `{"command":"git status; id"}`)))
	s.typeKeys("and who am I?\r")
	s.expect("⚠ shell wants to run")
	s.expect("[s]how everything: ")
	s.typeKeys("n")
	s.expect("✗ denied")
	s.expect("tai:default> ")

	s.typeKeys("/permissions\r")
	s.expect("1  shell commands starting with git status")
	s.expect("tai:default> ")
	s.typeKeys("/permissions remove 1\r")
	s.expect("(removed: shell: git status; it asks again)")
	s.expect("tai:default> ")
	srv.Push(llmtest.Calls(llmtest.Call("shell", `{"command":"git status"}`)))
	s.typeKeys("once more\r")
	s.expect("⚠ shell wants to run")
	s.expect("[s]how everything: ")
	s.typeKeys("n")
	s.expect("tai:default> ")
}

// TestKeptRuleUnderPipedPrompt: with its input piped, tai -p has nobody to
// ask, yet a shell call a rule kept for this folder covers runs; one the
// rule does not cover is still denied.
func TestKeptRuleUnderPipedPrompt(t *testing.T) {
	e := newEnv(t)
	if r := e.run(t, "-e", `assert(tai.permissions.add{tool = "shell", prefix = "echo"})`); r.status != 0 {
		t.Fatalf("keeping the rule: status %d: %s", r.status, r.stderr)
	}
	srv := llmtest.NewOpenAI(t, llmtest.Calls(llmtest.Call("shell", `{"command":"echo ran-under-the-rule"}`)))
	srv.SetRule(fromToolResults)
	r := e.runInput(t, e.modelVars(srv), "the input\n", "-p", "say it")
	if r.status != 0 || !strings.Contains(r.stdout, "\nran-under-the-rule\n") || strings.Contains(r.stderr, "denied") {
		t.Fatalf("the covered call: status %d\nstdout %q\nstderr %q", r.status, r.stdout, r.stderr)
	}

	srv.Push(llmtest.Calls(llmtest.Call("shell", `{"command":"echo a; echo b"}`)))
	r = e.runInput(t, e.modelVars(srv), "the input\n", "-p", "say both")
	if r.status != 0 || !strings.Contains(r.stderr, "✗ denied") || strings.Contains(r.stdout, "\na\n") {
		t.Fatalf("the call the rule does not cover: status %d\nstdout %q\nstderr %q", r.status, r.stdout, r.stderr)
	}
}

// TestRuleOutsideTheSandbox: tai.permissions.add keeps a shell rule with
// sandbox = false, tai.permissions.list and /permissions show the mark,
// and a rule that cannot carry it is refused with what to give.
func TestRuleOutsideTheSandbox(t *testing.T) {
	e := newEnv(t)
	r := e.run(t, "-e", `print(assert(tai.permissions.add{tool = "shell", prefix = "git push", sandbox = false}))
		print(assert(tai.permissions.add{tool = "shell", prefix = "git status"}))
		local list = assert(tai.permissions.list())
		print(#list, list[1].prefix, list[1].sandbox, list[2].prefix, list[2].sandbox)
		print(tai.permissions.add{tool = "shell", sandbox = false})
		print(pcall(tai.permissions.add, {tool = "shell", prefix = "ls", sandbox = "no"}))`)
	for _, want := range []string{
		"true\tkept: the model's commands starting with git push run outside the sandbox in ",
		"; this trusts what the model can write there",
		"\ntrue\n",
		"2\tgit push\tfalse\tgit status\tnil\n",
		"nil\tsandbox = false is for a shell rule with a prefix only",
		"false\t", "sandbox is true (the default: the commands run in the sandbox) or false",
	} {
		if r.status != 0 || !strings.Contains(r.stdout, want) {
			t.Fatalf("status %d, want %q in:\n%s\nstderr %s", r.status, want, r.stdout, r.stderr)
		}
	}
	s := startREPL(t, e)
	s.expect("> ")
	s.typeKeys("/permissions\r")
	s.expect("shell commands starting with git push, outside the sandbox")
	s.expect("> ")
	s.typeKeys("\x04")
	s.wait()
}

// TestAlwaysOnAShellCommandAllowsItsPrefixOnly: [a] pressed on "echo -n
// one" lets "echo two" run unasked for the rest of the session, while "rm"
// still asks; the question says what a allows.
func TestAlwaysOnAShellCommandAllowsItsPrefixOnly(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(fromToolResults)
	victim := e.write(t, "keep.txt", "kept\n")

	s := startREPLIn(t, e.root, e.modelVars(srv))
	s.expect("tai:default> ")
	srv.Push(llmtest.Calls(llmtest.Call("shell", `{"command":"echo -n one"}`)))
	s.typeKeys("say one\r")
	s.expect("[a]lways 'echo …' this session")
	s.expect("[s]how everything: ")
	s.typeKeys("a")
	s.expect("commands starting with echo run without asking for the rest of this session; others still ask")
	s.expect("--- stdout ---\r\none")
	s.expect("tai:default> ")

	srv.Push(llmtest.Calls(llmtest.Call("shell", `{"command":"echo two"}`)))
	s.typeKeys("say two\r")
	s.expect("--- stdout ---\r\ntwo")
	s.expect("tai:default> ")
	if n := strings.Count(s.seen.String(), "wants to run"); n != 1 {
		t.Fatalf("echo two was asked about (%d questions):\n%s", n, s.seen.String())
	}

	srv.Push(llmtest.Calls(llmtest.Call("shell", `{"command":"rm `+victim+`"}`)))
	s.typeKeys("remove it\r")
	s.expect("⚠ shell wants to run")
	s.expect("[s]how everything: ")
	s.typeKeys("n")
	s.expect("✗ denied")
	s.expect("tai:default> ")
	if _, err := os.Stat(victim); err != nil {
		t.Fatalf("rm ran after a on echo: %v", err)
	}
	s.typeKeys("/quit\r")
	s.wait()
}
