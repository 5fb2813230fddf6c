-- Tests for stdlib/mcpview.lua, each run as a Go subtest.
local view = require("mcpview")

local function eq(got, want, what)
  if got ~= want then error(string.format("%s: got %q, want %q", what, tostring(got), tostring(want)), 2) end
end

local function find(lines, pattern)
  for _, l in ipairs(lines) do
    if l:find(pattern, 1, true) then return l end
  end
  error("no line with " .. pattern .. " in:\n" .. table.concat(lines, "\n"), 2)
end

local function absent(lines, text)
  for _, l in ipairs(lines) do
    if l:find(text, 1, true) then error("secret shown: " .. l, 2) end
  end
end

return {
  ["argv is shell-quoted exactly"] = function()
    eq(view.argv({ command = "npx", args = { "-y", "@scope/pkg", "a b", "it's", "" } }), [[npx -y @scope/pkg 'a b' 'it'\''s' '']], "argv")
  end,

  ["references are shown, values are not"] = function()
    eq(view.reference("Bearer ${GITHUB_TOKEN}"), "Bearer ${GITHUB_TOKEN}", "bearer")
    eq(view.reference("sk-${A}x9secret"), "…${A}…", "literal parts hidden")
    eq(view.reference("${A}:${B}"), "${A}:${B}", "punctuation kept")
    eq(view.reference("plain-secret"), nil, "no reference")
    eq(view.url("https://h.example/?k=${OPENAI_API_KEY}&v=lit"), "https://h.example/?k=${OPENAI_API_KEY}&v=…", "url reference")
    local lines = view.entry({ name = "x", transport = "stdio", command = "c", env = { A = "${input:tok}", B = "hidden-value" }, headers = { Authorization = "Bearer ${T}" } })
    find(lines, "env:     A=${input:tok}, B  (values hidden)")
    absent(lines, "hidden-value")
  end,

  ["url hides userinfo and query values"] = function()
    eq(view.url("https://u:p@h.example/mcp/?tavilyApiKey=abc&x&y=2#f"), "https://…@h.example/mcp/?tavilyApiKey=…&x&y=…#f", "url")
    eq(view.url("https://mcp.context7.com/mcp"), "https://mcp.context7.com/mcp", "plain")
  end,

  ["a paste shows names, argv, env and header names but no values"] = function()
    local entries, notes = tai.mcp.normalize([[{
      "mcpServers": {
        "github": {"command": "docker", "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
                   "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_realLookingSecret123"}},
        "remote": {"url": "https://mcp.example.net/mcp", "headers": {"Authorization": "Bearer sk-live-secret-999"}},
        "old": {"type": "sse", "url": "https://x.example.net/sse"}
      }
    }]])
    local lines = view.lines(entries, notes)
    find(lines, "github  (stdio, disabled until /mcp enable, from config-json)")
    find(lines, "runs:    docker run -i --rm -e GITHUB_PERSONAL_ACCESS_TOKEN ghcr.io/github/github-mcp-server")
    find(lines, "env:     GITHUB_PERSONAL_ACCESS_TOKEN  (values hidden)")
    find(lines, "remote  (http,")
    find(lines, "url:     https://mcp.example.net/mcp")
    find(lines, "headers: Authorization  (values hidden)")
    find(lines, "refused  old: transport \"sse\" is not supported")
    absent(lines, "ghp_realLookingSecret123")
    absent(lines, "sk-live-secret-999")
    eq(view.summary(entries, notes):match("^the paste holds 2 servers, 1 refused") ~= nil, true, "summary")
    eq(view.summary(entries, notes, "/tmp/x/servers.json"):match("^/tmp/x/servers.json holds 2 servers, 1 refused") ~= nil, true, "summary of a file")
  end,
}
