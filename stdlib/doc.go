// Package stdlib holds the Lua files shipped inside the tai binary: main.lua
// (start-up dispatch), repl.lua (the interactive loop and its commands) and
// the modules they use, each the module tai.<name> (tai.repl, tai.chatview,
// …). The lua package loads them through its module loader, after the
// user's own $XDG_CONFIG_HOME/tai/lua/tai/ folder, so any of them can be
// replaced by a file of the same name there. meta/tai.lua describes the tai module
// to lua-language-server; nothing loads it at run time. help/NAME.txt
// are the topics of the manual (/help NAME in the REPL, tai --help NAME):
// plain text of at most 80 columns, the first line a summary; a NAME.txt
// in the user's $XDG_CONFIG_HOME/tai/help/ replaces or adds one (Topics).
//
//	src, err := fs.ReadFile(stdlib.Files(), "repl.lua")
//
// It imports nothing of tai: the lua package reads its files.
package stdlib
