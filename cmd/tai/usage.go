package main

// usage is what --help prints: every flag on one line (usage_test.go
// checks them against the flag set; topics_drift_test.go checks the
// manual's cli topic against it), then where to look for
// the rest.
const usage = `tai — a terminal agent shell: a model acts through tools, tai speaks MCP
both ways, and one vault file keeps secrets, records and the audit trail.

Usage:
  tai                       start the REPL (/help there lists topics, commands)
  tai SCRIPT.lua [ARGS…]    run a Lua script (arg[0] the script, arg[1..] ARGS)
  tai -e CHUNK [ARGS…]      run a Lua chunk, then exit
  tai -p PROMPT             one agent turn, answer on stdout (piped stdin added)
  tai -c [-p PROMPT]        continue the conversation last used in this folder
  tai --serve-mcp [-]       serve tai's tools over MCP (see Serving below)
  tai --help TOPIC          print a topic of the manual (listed at the end)

Options:
  -e CHUNK            run CHUNK instead of the REPL, then exit
  -p PROMPT           one agent turn on the current profile, then exit
  -c, --continue      continue the conversation last used in this folder
  --auto              approve tool calls and server starts; show what each runs
  --yolo              as --auto, but start servers without showing their command
  --profile NAME      use this model profile for this run
  --vault PATH        the vault file (else $TAI_VAULT, else the default below)
  --clean             ignore your init.lua and lua/ overrides
  --dump-stdlib DIR   write the built-in Lua files into DIR, then exit
  --serve-mcp [-]     serve MCP; the key from $TAI_MCP_KEY, or with - from stdin
  --mcp-port N        the server's port (else $TAI_MCP_PORT, else 8765)
  --mcp-bind ADDR     the server's address (else $TAI_MCP_BIND, else 127.0.0.1)
  --version           print the version, then exit
  -h, --help [TOPIC]  print this help, or a topic of the manual, then exit

Models:
  OPENAI_API_KEY (with OPENAI_BASE_URL for any OpenAI-compatible server) or
  ANTHROPIC_API_KEY (with ANTHROPIC_BASE_URL); TAI_MODEL names the model.
  Without a key tai uses a local Ollama on 127.0.0.1:11434. Named profiles:
  /profile new NAME provider=… model=… in the REPL, then /profile use NAME.

Serving (the key never goes on the command line, where ps shows it):
  export TAI_MCP_KEY=$(openssl rand -hex 32); tai --serve-mcp
  tai --serve-mcp - < key-file     (typed hidden when stdin is a terminal)
  Serving runs tool calls without asking, as --yolo does: give the key only
  to clients you trust with your shell and your vault.

Vault ($TAI_VAULT, else $XDG_DATA_HOME/tai/vault.db, ~/.local/share/tai/):
  seal it (secret values encrypted under a passphrase):
    TAI_VAULT_PASSPHRASE='…' tai -e 'assert(tai.vault.seal())'
  then tai reads TAI_VAULT_PASSPHRASE, or asks on the terminal (3 tries).

Files: ~/.config/tai/init.lua runs at start; ~/.config/tai/lua/tai/NAME.lua
  replaces the built-in tai.NAME (tai --dump-stdlib DIR writes them out);
  the REPL's history is in ~/.local/state/tai/history ($XDG_CONFIG_HOME,
  $XDG_STATE_HOME move them).

Exit status: 0 success, 1 an error (a Lua error, a failed turn), 2 bad
usage (an unknown profile included), 130 interrupted.
`
