-- Rule tests for stdlib/normalize.lua, each run as a Go subtest
-- (TestNormalizeRulesLua). A test fails by raising an error.
local N = require("normalize")

local function eq(got, want, what)
  if got ~= want then
    error(string.format("%s: got %s, want %s", what, tostring(got), tostring(want)), 2)
  end
end

local function words(list) return table.concat(list, " ") end

-- run(value [, goos]) calls the rules on a hand-built document.
local function run(value, goos, name)
  return N:normalize({ value = value, format = "json", goos = goos or "linux", name = name, order = {} })
end

local function has_note(notes, pattern)
  for _, n in ipairs(notes) do
    if n.text:find(pattern) then return n end
  end
  error("no note matching " .. pattern, 2)
end

local function normalize(text, name)
  local entries, notes = tai.mcp.normalize(text, name)
  if not entries then error(notes, 2) end
  return entries, notes
end

return {
  ["npx is wrapped in cmd /c on windows"] = function()
    local es, notes = run({ mcpServers = { mem = { command = "npx", args = { "-y", "@modelcontextprotocol/server-memory" } } } }, "windows")
    eq(es[1].command, "cmd", "command")
    eq(words(es[1].args), "/c npx -y @modelcontextprotocol/server-memory", "args")
    has_note(notes, "cmd /c on Windows")
  end,

  ["uvx is never wrapped"] = function()
    local es = run({ mcpServers = { git = { command = "uvx", args = { "mcp-server-git" } } } }, "windows")
    eq(es[1].command, "uvx", "command")
    eq(words(es[1].args), "mcp-server-git", "args")
  end,

  ["cmd /c is taken off elsewhere"] = function()
    local es = run({ mcpServers = { c7 = { command = "cmd", args = { "/c", "npx", "-y", "@upstash/context7-mcp" } } } }, "darwin")
    eq(es[1].command, "npx", "command")
    eq(words(es[1].args), "-y @upstash/context7-mcp", "args")
  end,

  ["a command line is split as a shell would"] = function()
    local w = assert(N.split([[npx -y "my pkg" 'it''s' a\ b "q\"x" --k=v]]))
    eq(#w, 7, "word count")
    eq(w[3], "my pkg", "double quotes")
    eq(w[4], "its", "adjacent single quotes")
    eq(w[5], "a b", "backslash space")
    eq(w[6], 'q"x', "escaped quote")
    local none, why = N.split("npx 'open")
    eq(none, nil, "unclosed quote")
    assert(why:find("left open"), why)
    none, why = N.split("cd x && npx y")
    eq(none, nil, "shell operator")
    assert(why:find("&"), why)
    eq(N.split("a <token> b")[2], "<token>", "placeholder kept")
    eq(tai.mcp.split("a 'b c'")[2], "b c", "tai.mcp.split is the same splitter")
  end,

  ["a whole command line in command becomes command and args"] = function()
    local es = normalize([[{"mcpServers": {"t": {"command": "npx -y mcp-remote 'https://x.example/mcp?a=1&b=2'"}}}]])
    eq(es[1].command, "npx", "command")
    eq(es[1].args[3], "https://x.example/mcp?a=1&b=2", "quoted url")
  end,

  ["a command line that needs a shell is refused with the reason"] = function()
    local es, notes = normalize([[{"mcpServers": {"bad": {"command": "cd /srv && node index.js"}, "ok": {"command": "node"}}}]])
    eq(#es, 1, "the other entry still comes through")
    eq(es[1].name, "ok", "name")
    local n = has_note(notes, "without a shell")
    eq(n.level, "refused", "level")
    eq(n.server, "bad", "server")
  end,

  ["url without type is http; legacy sse is refused only for its entry"] = function()
    local es, notes = normalize([[{"mcpServers": {"a": {"url": "https://mcp.example.net/mcp"}, "b": {"type": "sse", "url": "https://x.example.net/sse"}, "c": {"type": "ws", "url": "wss://x.example.net/ws"}}}]])
    eq(#es, 1, "entries")
    eq(es[1].transport, "http", "transport")
    local refused = 0
    for _, n in ipairs(notes) do if n.level == "refused" then refused = refused + 1 end end
    eq(refused, 2, "refused notes")
  end,

  ["transport spellings"] = function()
    for _, t in ipairs({ "streamable-http", "streamableHttp", "http", "remote", "streamable_http" }) do
      local es = run({ servers = { x = { type = t, url = "https://h.example.net/mcp" } } })
      eq(es[1].transport, "http", t)
    end
    for _, t in ipairs({ "stdio", "local" }) do
      local es = run({ servers = { x = { transportType = t, command = "node" } } })
      eq(es[1].transport, "stdio", t)
    end
  end,

  ["cursor env form and bare dollars"] = function()
    local es = run({ mcpServers = { x = { command = "node", env = { A = "${env:TOKEN}", B = "$UPPER_ONE", C = "my-$$e-$ecret" }, headers = {} } } })
    eq(es[1].env.A, "${TOKEN}", "env:")
    eq(es[1].env.B, "${UPPER_ONE}", "bare upper")
    eq(es[1].env.C, "my-$$e-$ecret", "literal dollars kept")
  end,

  ["toml keys map as the seed says"] = function()
    local es, notes = normalize([[
[mcp_servers.figma]
url = "https://mcp.figma.com/mcp"
bearer_token_env_var = "FIGMA_TOKEN"
http_headers = { "X-Static" = "v1" }
env_http_headers = { "X-From-Env" = "XENV" }
enabled = false
enabled_tools = ["a", "b"]
disabled_tools = ["c"]
startup_timeout_sec = 30
tool_timeout_sec = 10

[mcp_servers.local]
command = "srv"
env = { A = "1" }
env_vars = ["PASSME"]
cwd = "/tmp"
]])
    eq(#es, 2, "entries")
    local f, l = es[1], es[2]
    eq(f.name, "figma", "order kept")
    eq(f.headers.Authorization, "Bearer ${FIGMA_TOKEN}", "bearer")
    eq(f.headers["X-Static"], "v1", "http_headers")
    eq(f.headers["X-From-Env"], "${XENV}", "env_http_headers")
    eq(f.enabled, false, "enabled")
    eq(words(f.allow), "a b", "allow")
    eq(words(f.deny), "c", "deny")
    eq(f.source, "config-toml", "source")
    has_note(notes, "ignored startup_timeout_sec")
    has_note(notes, "ignored tool_timeout_sec")
    eq(l.env.A, "1", "env")
    eq(l.env.PASSME, "${PASSME}", "env_vars")
    eq(l.cwd, "/tmp", "cwd")
  end,

  ["wrappers"] = function()
    local cases = {
      { [[{"mcpServers": {"a": {"command": "x"}}}]], "a" },
      { [[{"servers": {"a": {"command": "x"}}}]], "a" },
      { [[{"mcp": {"servers": {"a": {"command": "x"}}, "inputs": []}}]], "a" },
      { [[{"context_servers": {"a": {"command": {"path": "x", "args": ["1"]}}}}]], "a" },
      { [["amp.mcpServers": {"a": {"command": "x"}}]], "a" },
      { [[{"mcp": {"a": {"type": "local", "command": ["x", "1"], "environment": {"K": "v"}}}}]], "a" },
      { [["a": {"command": "x"}]], "a" },
      { "[mcp_servers.a]\ncommand = \"x\"\n", "a" },
    }
    for _, c in ipairs(cases) do
      local es = normalize(c[1])
      eq(es[1] and es[1].name, c[2], c[1])
      eq(es[1].command, "x", c[1])
    end
    local es = normalize([[{"mcp": {"a": {"type": "local", "command": ["x", "1"], "environment": {"K": "v"}}}}]])
    eq(words(es[1].args), "1", "opencode args")
    eq(es[1].env.K, "v", "opencode environment")
  end,

  ["keys clients use"] = function()
    local es, notes = normalize([[{"mcpServers": {
      "g": {"httpUrl": "https://g.example.net/mcp", "trust": true, "timeout": 5000, "includeTools": ["a"], "excludeTools": ["b"]},
      "w": {"serverUrl": "https://w.example.net/mcp"},
      "c": {"command": "x", "disabled": true, "autoApprove": ["t"], "alwaysAllow": ["u"]},
      "p": {"command": "x", "working_directory": "/w", "start_on_launch": true, "env_file": ".env"},
      "q": {"command": "x", "tools": ["*"]}
    }}]])
    eq(es[1].transport, "http", "httpUrl")
    eq(words(es[1].allow), "a", "includeTools")
    eq(words(es[1].deny), "b", "excludeTools")
    eq(es[2].url, "https://w.example.net/mcp", "serverUrl")
    eq(es[3].enabled, false, "disabled")
    eq(es[4].cwd, "/w", "working_directory")
    eq(es[5].allow, nil, "tools * offers all")
    has_note(notes, "ignored trust: tai never takes approval")
    has_note(notes, "ignored autoApprove")
    has_note(notes, "ignored alwaysAllow")
    has_note(notes, "ignored env_file")
  end,

  ["a bare entry is named after its package or url"] = function()
    local cases = {
      { [[{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}]], "memory" },
      { [[{"url": "https://mcp.context7.com/mcp"}]], "context7" },
      { [[{"command": "uvx", "args": ["mcp-server-fetch"]}]], "fetch" },
      { [[{"command": "npx", "args": ["@playwright/mcp@latest"]}]], "playwright" },
      { [[{"command": "docker", "args": ["run", "-i", "--rm", "-e", "X", "ghcr.io/github/github-mcp-server"]}]], "github" },
      { [[{"command": "npx", "args": ["-y", "mcp-remote", "https://mcp.linear.app/mcp"]}]], "linear" },
      { "https://mcp.example.org/mcp", "example" },
      { "https://mcp.notion.com/mcp", "notion" },
      { "https://api.githubcopilot.com/mcp/", "githubcopilot" },
      { "http://127.0.0.1:8765/mcp", "local-8765" },
      { "http://localhost:3000/mcp", "local-3000" },
      { "http://[::1]:9/mcp", "local-9" },
      { "http://10.0.0.5/mcp", "host-10-0-0-5" },
      { "http://mcp.127.0.0.1.nip.io:8080/mcp", "local-8080" },
      { "http://notes.127.0.0.1.nip.io:8080/mcp", "notes" },
      { "https://app-10-0-0-5.sslip.io/mcp", "app" },
      { "https://10-0-0-5.sslip.io/mcp", "host-10-0-0-5" },
      { "http://wiki.localtest.me:81/mcp", "wiki" },
      { "https://123.tools.example.com/mcp", "tools" },
      { "https://mcp.com/mcp", "mcp" },
      { "http://myhost:9000/mcp", "myhost" },
    }
    for _, c in ipairs(cases) do
      local es, notes = normalize(c[1])
      eq(es[1].name, c[2], c[1])
      has_note(notes, "no name was given")
    end
    local es = normalize([[{"command": "npx", "args": ["x"]}]], "Given Name")
    eq(es[1].name, "given-name", "the name given wins, under the rule")
  end,

  ["vs code inputs are vault secrets, defaults kept"] = function()
    local es, notes = normalize([[{"inputs": [{"type": "promptString", "id": "db", "description": "DB", "default": "/tmp/x.db"}, {"id": "tok", "password": true}],
      "servers": {"s": {"command": "uvx", "args": ["${input:db}"], "env": {"T": "${input:tok}"}}}}]])
    eq(es[1].args[1], "${input:db:-/tmp/x.db}", "default")
    eq(es[1].env.T, "${input:tok}", "plain input")
    has_note(notes, 'tai.vault.secret_set%("tok"')
  end,

  ["names follow the rule and are unique"] = function()
    local es, notes = normalize([[{"mcpServers": {"Context7": {"command": "a"}, "context7": {"command": "b"}}}]])
    eq(#es, 2, "both kept")
    eq(es[1].name, "context7-2", "the one renamed by the rule gives way")
    eq(es[2].name, "context7", "the one already following the rule keeps its name")
    has_note(notes, 'named "context7%-2" %(from "Context7"%)')
    es, notes = normalize([[{"mcpServers": {"x": {"command": "a"}}, "servers": {"x": {"command": "b"}}}]])
    eq(#es, 1, "one survives")
    eq(es[1].command, "a", "the first")
    local n = has_note(notes, "already named")
    eq(n.level, "refused", "level")
  end,
}
