package main

import (
	"strings"
	"testing"

	"tai/engine/llm/llmtest"
)

// TestREPLPasteIsOneMessage pastes five lines the way a terminal does in
// bracketed-paste mode: the model gets them as one message, in one
// request. A newline typed with Alt-Enter or a trailing backslash
// continues the message on a further line.
func TestREPLPasteIsOneMessage(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(fromToolResults)
	s := startREPLWith(t, e, e.modelVars(srv))
	s.expect("\x1b[?2004h") // the REPL asks for bracketed paste
	s.expect("tai:default> ")

	trace := "panic: boom\n\ngoroutine 1 [running]:\nmain.main()\n\t/src/main.go:5 +0x1d"
	s.typeKeys("\x1b[200~" + strings.ReplaceAll(trace, "\n", "\r") + "\r\x1b[201~")
	s.expect("[Pasted text #1 +5 lines]") // a long paste is shown folded
	s.typeKeys(" what broke?\r")
	s.expect("you said: panic: boom")
	s.expect("tai:default> ")
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests for one paste", len(reqs))
	}
	if got, want := reqs[0].LastUser(), trace+"\n what broke?"; got != want {
		t.Fatalf("message %q, want %q", got, want)
	}

	// Alt-Enter and a trailing backslash each start a further line.
	s.typeKeys("first line\x1b\r")
	s.expect("... ")
	s.typeKeys("second line \\\r")
	s.expect("... ")
	s.typeKeys("third\r")
	s.expect("you said: first line")
	s.expect("tai:default> ")
	reqs = srv.Requests()
	if len(reqs) != 2 || reqs[1].LastUser() != "first line\nsecond line \nthird" {
		t.Fatalf("%d requests; last message %q", len(reqs), reqs[len(reqs)-1].LastUser())
	}

	// A pasted MCP config is still read as one config.
	s.typeKeys("\x1b[200~{\r  \"mcpServers\": {\r    \"fetch\": {\"command\": \"uvx\", \"args\": [\"mcp-server-fetch\"]}\r  }\r}\x1b[201~\r")
	s.expect("the paste holds 1 server")
	s.expect("fetch  (stdio, you choose to enable it when adding, from config-json)")
	s.expect("run:     uvx\r\n           mcp-server-fetch")
	s.expect("Add it? [y/d/N]")
	if strings.Contains(s.seen.String(), "runs:") {
		t.Fatalf("the command was shown twice, before the consent screen and on it:\n%s", s.seen.String())
	}
	s.expect("answer> ")
	s.typeKeys("\r")
	s.expect("(you said no; nothing was started)")
	s.expect("tai:default> ")
	if n := len(srv.Requests()); n != 2 {
		t.Fatalf("a pasted config reached the model (%d requests)", n)
	}
	s.typeKeys("\x04")
	s.wait()
}

// TestREPLCtrlCStopsARead: Ctrl-C stops a Lua read of the terminal
// (= io.read()) and the REPL goes on.
func TestREPLCtrlCStopsARead(t *testing.T) {
	e := newEnv(t)
	s := startREPL(t, e)
	s.expect("> ")
	s.typeKeys("= (function() print(\"reading\") return io.read() end)()\r")
	s.expect("reading\r\n")
	s.typeKeys("\x03")
	s.expect("interrupted")
	s.expect("> ")
	s.typeKeys("= 40 + 2\r")
	s.expect("42")
	s.typeKeys("\x04")
	if status := s.wait(); status != 0 {
		t.Fatalf("exit status %d", status)
	}
}

// TestREPLPastedDataReachesTheModel: a pasted JSON object, a pasted
// Cargo.toml and a pasted compose file are data, not MCP configs: each
// goes to the model whole, with a one-line note saying so.
func TestREPLPastedDataReachesTheModel(t *testing.T) {
	e := newEnv(t)
	srv := llmtest.NewOpenAI(t)
	srv.SetRule(fromToolResults)
	s := startREPLWith(t, e, e.modelVars(srv))
	s.expect("tai:default> ")

	obj := `{"name": "bob", "age": 3}`
	s.typeKeys("\x1b[200~" + obj + "\x1b[201~\r")
	s.expect("\r\nsent to the model (not an MCP config)\r\n")
	s.expect("you said: " + obj)
	s.expect("tai:default> ")

	cargo := "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nserde = \"1\""
	s.typeKeys("\x1b[200~" + strings.ReplaceAll(cargo, "\n", "\r") + "\x1b[201~\r")
	s.expect("\r\nsent to the model (not an MCP config)\r\n")
	s.expect("you said: [package]")
	s.expect("tai:default> ")
	compose := "services:\n  web:\n    image: nginx"
	s.typeKeys("\x1b[200~" + strings.ReplaceAll(compose, "\n", "\r") + "\x1b[201~\r")
	s.expect("\r\nsent to the model (not an MCP config)\r\n")
	s.expect("you said: services:")
	s.expect("tai:default> ")
	reqs := srv.Requests()
	if len(reqs) != 3 || reqs[0].LastUser() != obj || reqs[1].LastUser() != cargo || reqs[2].LastUser() != compose {
		t.Fatalf("%d requests; the model got %q", len(reqs), reqs[len(reqs)-1].LastUser())
	}
	if strings.Contains(s.seen.String(), "no MCP server") {
		t.Fatalf("data was read as a config:\n%s", s.seen.String())
	}
	s.typeKeys("\x04")
	s.wait()
}
