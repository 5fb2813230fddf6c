// Command tai is a terminal agent shell: a readline REPL where a model acts
// through tools, with the vault behind it. main parses the command line,
// builds the Lua host (which opens the vault and builds the engine only when
// something needs them) and hands over to stdlib/main.lua.
//
//	tai                      the REPL
//	tai SCRIPT.lua [ARGS…]   run a script
//	tai -e CHUNK [ARGS…]     run a chunk
//	tai -p PROMPT            one agent turn, the answer on stdout
//
// It imports lua, and the engine, stdlib and vault packages lua builds on
// for its flags and helper modes; nothing imports it.
package main
