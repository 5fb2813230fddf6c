-- normalize.lua: the repair rules of the MCP config normalizer.
--
-- Go parses what a person pasted (JSON with comments, TOML, a fragment)
-- and calls M:normalize(doc) in a Lua state of its own; Go then validates
-- what comes back (names, transports, placeholders, unknown fields) and
-- turns it into canonical entries. These rules know the wrappers and keys
-- of the clients whose configs READMEs show: Claude Desktop and Code,
-- VS Code, Cursor, Windsurf, Cline and Roo, Zed, opencode, Crush, Amp,
-- Warp, Gemini CLI, Copilot and Codex (TOML).
--
--   doc = { value = <the parsed text>, format = "json" | "toml" | "url" | "cli",
--           name = <a name for a bare entry, or nil>, goos = "linux" | …,
--           order = { [object table] = { key, … } } }   -- keys in source order
--   M:normalize(doc) -> entries, notes
--     entries: { { name=, transport=, command=, args=, env=, cwd=, url=,
--                  headers=, allow=, deny=, sandbox=, enabled= }, … }  (any other key
--                  left in an entry is named by Go as unknown)
--     notes:   { { server=, level = "info" | "warn" | "refused", text= }, … }
--
-- Replacing or wrapping the rules: a file ~/.config/tai/lua/tai/normalize.lua
-- (or lua/normalize.lua) replaces this one. Every step is called through self, so a module that
-- inherits from the built-in one and overrides a single hook changes just
-- that step:
--
--   local base = require("builtin.normalize")   -- always the shipped file
--   local M = setmetatable({}, { __index = base })
--   function M:entry(name, raw, ctx)
--     local e = base.entry(self, name, raw, ctx)
--     if e and e.command == "docker" then ctx:note(name, "info", "runs in docker") end
--     return e
--   end
--   return M
--
-- Hooks: M:normalize(doc), M:servers(doc, ctx), M:entry(name, raw, ctx),
-- M:name(name, e, ctx), M:platform(name, e, ctx), M:inputs(name, e, ctx).
-- ctx:note(server, level, text) adds a note; ctx:refuse(server, text)
-- leaves an entry out with its reason.

local M = {}

local function is_table(v) return type(v) == "table" end

-- keys(doc, t) returns t's string keys in source order.
---@param doc table
---@param t table
---@return string[]
function M.keys(doc, t)
  local ks = doc.order and doc.order[t]
  if ks then
    local out = {}
    for _, k in ipairs(ks) do
      if t[k] ~= nil then out[#out + 1] = k end
    end
    return out
  end
  local out = {}
  for k in pairs(t) do
    if type(k) == "string" then out[#out + 1] = k end
  end
  table.sort(out)
  return out
end

local function is_list(t)
  if not is_table(t) then return false end
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  return n == #t
end

local function quote_list(list)
  local out = {}
  for i, s in ipairs(list) do out[i] = string.format("%q", tostring(s)) end
  return table.concat(out, ", ")
end

-- Shell words ------------------------------------------------------------

-- M.split(line) splits a command line as a POSIX shell would: blanks
-- separate words, 'single' and "double" quotes group (backslash escapes
-- $ ` " \ inside double quotes), a backslash outside quotes escapes the
-- next character, a README's <placeholder> is kept. It returns the words,
-- or nil and why when a quote is left open or the line needs a shell
-- (| & ; < > ( ) ` or $( ). It is tai.mcp.split, the splitter Go uses for
-- a pasted "mcp add" line; replace M.split to change both of its uses here.
---@param line string
---@return string[]|nil
---@return string|nil
function M.split(line)
  return tai.mcp.split(line)
end

-- Finding the servers ----------------------------------------------------

-- entry_keys are the keys that make a table look like one server entry.
M.entry_keys = { "command", "url", "httpUrl", "serverUrl" }

---@param t any
---@return boolean
function M.looks_like_entry(t)
  if not is_table(t) or is_list(t) and #t > 0 then return false end
  for _, k in ipairs(M.entry_keys) do
    local v = t[k]
    if type(v) == "string" or (k == "command" and is_table(v)) then return true end
  end
  return false
end

-- wrappers are the keys that hold name → entry maps, with the client
-- that writes each.
M.wrappers = {
  { key = "mcpServers", client = "Claude Desktop, Cursor, Cline, Windsurf, Gemini CLI" },
  { key = "servers", client = "VS Code" },
  { key = "mcp_servers", client = "Codex" },
  { key = "context_servers", client = "Zed" },
  { key = "amp.mcpServers", client = "Amp" },
  { key = "mcp", client = "VS Code settings, opencode, Crush" },
}

-- ignored_top says why a top-level key beside the servers is left alone.
M.ignored_top = {
  ["$schema"] = "the settings file's JSON schema",
  name = "the name of a Gemini CLI extension or package, not of a server",
  version = "the version of a Gemini CLI extension or package",
  description = "a description of the file",
  inputs = "VS Code's prompts; tai reads ${input:ID} from the vault instead",
}

-- servers(doc, ctx) returns the list of {name=, raw=} found in doc.
---@param doc table
---@param ctx table
---@return {name: string, raw: table}[]
function M:servers(doc, ctx)
  local v = doc.value
  local out = {}
  if not is_table(v) then
    ctx:note("", "refused", string.format("the text holds a single %s, not a config object", type(v)))
    return out
  end
  if is_list(v) and #v > 0 then
    for i, e in ipairs(v) do
      if M.looks_like_entry(e) then
        out[#out + 1] = { name = type(e.name) == "string" and e.name or nil, raw = e }
      else
        ctx:note("", "warn", string.format("list item %d is not a server entry (it has no command or url); it is ignored", i))
      end
    end
    return out
  end
  if M.looks_like_entry(v) then
    return { { name = doc.name, raw = v, bare = true } }
  end
  local used = {}
  for _, w in ipairs(M.wrappers) do
    local servers = v[w.key]
    if is_table(servers) then
      if w.key == "mcp" and (is_table(servers.servers) or is_table(servers.inputs)) then
        -- VS Code settings.json: "mcp": { "inputs": […], "servers": {…} }
        used.mcp = true
        ctx.inputs = self:read_inputs(doc, servers.inputs, ctx)
        servers = servers.servers
      end
      if is_table(servers) then
        used[w.key] = true
        self:add_named(doc, servers, out, ctx)
      end
    end
  end
  -- a dotted settings key ("mcp.servers": {…}, as VS Code's settings UI
  -- and some READMEs write it) whose last part is a wrapper
  for _, k in ipairs(M.keys(doc, v)) do
    local last = type(k) == "string" and k:find(".", 1, true) and not used[k] and k:match("([^.]+)$")
    if last and is_table(v[k]) then
      for _, w in ipairs(M.wrappers) do
        if w.key == last and w.key ~= "mcp" then
          used[k] = true
          ctx:note("", "info", string.format("read the dotted key %q as the %q wrapper (%s)", k, last, w.client))
          self:add_named(doc, v[k], out, ctx)
          break
        end
      end
    end
  end
  if is_table(v.inputs) then
    ctx.inputs = self:read_inputs(doc, v.inputs, ctx)
  end
  if next(used) then
    local ignored = {}
    for _, k in ipairs(M.keys(doc, v)) do
      if not used[k] and k ~= "inputs" then ignored[#ignored + 1] = k end
    end
    for _, k in ipairs(ignored) do
      local why = M.ignored_top[k] or "not a server wrapper tai knows"
      ctx:note("", "info", string.format("ignored the top-level key %q: %s", k, why))
    end
    return out
  end
  -- No wrapper: a name-keyed object of entries (Warp, a Claude Code
  -- plugin's .mcp.json, a README's "name": {…} fragment).
  self:add_named(doc, v, out, ctx)
  return out
end

---@param doc table
---@param map table
---@param out table
---@param ctx table
function M:add_named(doc, map, out, ctx)
  if is_list(map) and #map > 0 then
    ctx:note("", "warn", "the servers are given as a list; tai expected an object of names to entries and read the list items instead")
    for _, e in ipairs(map) do
      if M.looks_like_entry(e) then out[#out + 1] = { name = e.name, raw = e } end
    end
    return
  end
  for _, k in ipairs(M.keys(doc, map)) do
    local e = map[k]
    if M.looks_like_entry(e) then
      out[#out + 1] = { name = k, raw = e }
    elseif type(e) == "string" and (k:sub(1, 1) == "_" or k:sub(1, 2) == "//") then
      ctx:note("", "info", string.format("ignored %q: a comment", k))
    elseif M.ignored_top[k] then
      ctx:note("", "info", string.format("ignored the key %q: %s", k, M.ignored_top[k]))
    elseif is_table(e) and (e.type ~= nil or e.transport ~= nil) then
      ctx:refuse(k, "the entry has neither a command nor a url")
    else
      ctx:note("", "warn", string.format("%q is not a server entry (no command or url); it is ignored", k))
    end
  end
end

-- read_inputs turns VS Code's inputs list into a map id → input.
---@param doc table
---@param list any
---@param ctx table
---@return table<string, table>
function M:read_inputs(doc, list, ctx)
  local inputs = ctx.inputs or {}
  if not is_table(list) then return inputs end
  for _, input in ipairs(list) do
    if is_table(input) and type(input.id) == "string" then inputs[input.id] = input end
  end
  return inputs
end

-- One entry ----------------------------------------------------------------

-- transports maps each spelling of a transport to tai's.
M.transports = {
  stdio = "stdio", ["local"] = "stdio", command = "stdio", process = "stdio",
  http = "http", ["streamable-http"] = "http", streamablehttp = "http", streamable_http = "http",
  streamable = "http", ["streamable http"] = "http", remote = "http", ["http-stream"] = "http",
  sse = "sse", ws = "ws", websocket = "ws",
}

-- ignored says, for keys that are known but do nothing in tai, why.
M.ignored = {
  timeout = "tai's own caps govern (20 s to connect, 60 s per call)",
  startup_timeout_sec = "tai's own caps govern (20 s to connect, 60 s per call)",
  startup_timeout_ms = "tai's own caps govern (20 s to connect, 60 s per call)",
  startup_timeout = "tai's own caps govern (20 s to connect, 60 s per call)",
  tool_timeout_sec = "tai's own caps govern (20 s to connect, 60 s per call)",
  tool_timeout_ms = "tai's own caps govern (20 s to connect, 60 s per call)",
  initTimeout = "tai's own caps govern (20 s to connect, 60 s per call)",
  trust = "tai never takes approval from a pasted config: calls are approved at the prompt, or by --auto/--yolo",
  autoApprove = "tai never takes approval from a pasted config: calls are approved at the prompt, or by --auto/--yolo",
  alwaysAllow = "tai never takes approval from a pasted config: calls are approved at the prompt, or by --auto/--yolo",
  start_on_launch = "tai starts a server when its tools are first needed",
  source = "Zed's marker for a hand-written entry",
  settings = "Zed hands these to its extension; an MCP server does not read them",
  authProviderType = "tai discovers a remote server's authorization itself; Gemini CLI's provider settings are not used",
  description = "a description for people; tai shows the server's own",
  gallery = "VS Code's gallery link",
  env_file = "tai does not read env files: put the variables in env, or in the vault with tai.vault.secret_set",
  envFile = "tai does not read env files: put the variables in env, or in the vault with tai.vault.secret_set",
  networkTimeout = "tai's own caps govern (20 s to connect, 60 s per call)",
}

local function lower(s) return type(s) == "string" and s:lower() or s end

-- oauth_keys maps the keys of Claude Code's, Gemini CLI's and Codex's
-- oauth objects onto tai's; "redirect" is a redirect URI whose port is
-- the callback port.
M.oauth_keys = {
  clientId = "client_id", client_id = "client_id",
  clientSecret = "client_secret", client_secret = "client_secret",
  callbackPort = "callback_port", callback_port = "callback_port",
  clientMetadataUrl = "client_metadata_url", client_metadata_url = "client_metadata_url",
  redirectUri = "redirect", redirect_uri = "redirect", callback_url = "redirect",
}

-- oauth_ignored are the oauth keys tai knows and does without.
M.oauth_ignored = {
  enabled = true, authorizationUrl = true, tokenUrl = true, registrationUrl = true, issuer = true,
  authServerMetadataUrl = true, scopes = true, audiences = true, tokenParamName = true, scope = true,
}

-- entry(name, raw, ctx) maps one raw entry to canonical fields, or returns
-- nil after ctx:refuse.
---@param name string
---@param raw table
---@param ctx table
---@return table|nil
function M:entry(name, raw, ctx)
  local doc = ctx.doc
  local e = {}
  local rest = {}
  local order = M.keys(doc, raw)
  for _, k in ipairs(order) do rest[k] = raw[k] end
  local function take(...)
    for _, k in ipairs({ ... }) do
      local v = rest[k]
      if v ~= nil then
        rest[k] = nil
        return v, k
      end
    end
  end
  local function note(level, text) ctx:note(name, level, text) end
  -- take_first(level, ...) is take(...) for keys that name one thing: each
  -- other one given as well is dropped with a note at level.
  local function take_first(level, ...)
    local v, key = take(...)
    for _, k in ipairs({ ... }) do
      if rest[k] ~= nil then
        note(level, string.format("%q is given as well as %q; tai went by %q", k, key, key))
        rest[k] = nil
      end
    end
    return v, key
  end

  -- transport
  local t, tkey = take_first("info", "type", "transport", "transportType")
  if t ~= nil then
    local mapped = M.transports[lower(t)]
    if type(t) ~= "string" then
      note("warn", string.format("%s is a %s, not a transport name; tai decides from command or url", tkey, type(t)))
    elseif mapped then
      e.transport = mapped
      if mapped ~= t and mapped ~= "sse" and mapped ~= "ws" then
        note("info", string.format("%s %q is tai's transport %q", tkey, t, mapped))
      end
    else
      e.transport = t
    end
  end

  -- the command
  local cmd = take("command")
  local args = take("args")
  if type(args) == "string" then
    local words, why = M.split(args)
    if not words then
      ctx:refuse(name, "args is one string that cannot be split into words: " .. why)
      return nil
    end
    note("info", "args was one string; split it into " .. #words .. " words")
    args = words
  end
  if is_table(cmd) and not is_list(cmd) then
    -- Zed: "command": { "path": …, "args": […], "env": {…} }
    local path = cmd.path or cmd.command
    if type(path) ~= "string" then
      ctx:refuse(name, "command is an object without a path")
      return nil
    end
    e.command = path
    args = cmd.args or args
    if is_table(cmd.env) then rest.env = rest.env or cmd.env end
    note("info", "command given as Zed's {path, args, env} object")
  elseif is_table(cmd) then
    -- opencode: "command": ["npx", "-y", "pkg"]
    if #cmd == 0 or type(cmd[1]) ~= "string" then
      ctx:refuse(name, "command is an empty list")
      return nil
    end
    e.command = cmd[1]
    local a = {}
    for i = 2, #cmd do a[#a + 1] = cmd[i] end
    if is_table(args) then for _, x in ipairs(args) do a[#a + 1] = x end end
    args = a
    note("info", "command given as a list (program, then its arguments)")
  elseif type(cmd) == "string" then
    e.command = cmd
    local empty = args == nil or (is_table(args) and next(args) == nil)
    if empty and cmd:find("%s") then
      local words, why = M.split(cmd)
      if not words then
        ctx:refuse(name, "command holds a whole command line that tai cannot run without a shell: " .. why .. "; write the program in command and its arguments in args")
        return nil
      end
      e.command = words[1]
      table.remove(words, 1)
      args = words
      note("info", string.format("command held the whole command line; split it as a shell would into command %q and %d argument%s (quote a program path that has spaces)", e.command, #args, #args == 1 and "" or "s"))
    end
  elseif cmd ~= nil then
    ctx:refuse(name, "command is a " .. type(cmd) .. "; it must be a string")
    return nil
  end
  if args ~= nil then e.args = args end

  -- environment
  local env = {}
  local has_env = false
  local function merge(t, key)
    if t == nil then return end
    if not is_table(t) then
      ctx:refuse(name, key .. " is a " .. type(t) .. "; it must be an object of names to values")
      return
    end
    for _, k in ipairs(M.keys(doc, t)) do
      env[k] = t[k]
      has_env = true
    end
  end
  merge(take("env"), "env")
  local environment = take("environment")
  if environment ~= nil then
    merge(environment, "environment")
    note("info", "environment (opencode's name) is tai's env")
  end
  local env_vars = take("env_vars")
  if is_table(env_vars) then
    local names = {}
    for _, v in ipairs(env_vars) do
      if type(v) == "string" and env[v] == nil then
        env[v] = "${" .. v .. "}"
        has_env = true
        names[#names + 1] = v
      end
    end
    if #names > 0 then
      note("info", "env_vars " .. quote_list(names) .. " pass through from tai's environment (or the vault) as ${NAME}")
    end
  elseif env_vars ~= nil then
    note("warn", "env_vars is not a list of names; it is ignored")
  end
  if has_env then e.env = env end

  -- folder
  local cwd, ckey = take("cwd", "working_directory", "workingDirectory")
  if type(cwd) == "string" and cwd ~= "" then
    e.cwd = cwd
    if ckey ~= "cwd" then note("info", ckey .. " is tai's cwd") end
  elseif cwd ~= nil and cwd ~= "" then
    note("warn", ckey .. " is not a string; it is ignored")
  end

  -- the remote leg
  local url, ukey = take_first("warn", "url", "httpUrl", "serverUrl", "uri")
  if url ~= nil then
    e.url = url
    if ukey == "httpUrl" or ukey == "serverUrl" then
      note("info", ukey .. " is tai's url, over Streamable HTTP")
      if e.transport == nil then e.transport = "http" end
    end
  end
  local headers = {}
  local has_headers = false
  local function add_headers(t, key, fn)
    if t == nil then return end
    if not is_table(t) then
      ctx:refuse(name, key .. " is a " .. type(t) .. "; it must be an object of header names to values")
      return
    end
    for _, k in ipairs(M.keys(doc, t)) do
      if headers[k] ~= nil then
        note("warn", string.format("header %q is given twice; tai keeps the one from %s", k, key))
      end
      headers[k] = fn and fn(t[k]) or t[k]
      has_headers = true
    end
  end
  add_headers(take("headers"), "headers")
  local hh = take("http_headers")
  if hh ~= nil then add_headers(hh, "http_headers") end
  local eh = take("env_http_headers")
  if eh ~= nil then
    add_headers(eh, "env_http_headers", function(v) return type(v) == "string" and "${" .. v .. "}" or v end)
    note("info", "env_http_headers: each header's value is read from the variable it names, as ${NAME}")
  end
  local bearer = take("bearer_token_env_var")
  if type(bearer) == "string" then
    headers.Authorization = "Bearer ${" .. bearer .. "}"
    has_headers = true
    note("info", "bearer_token_env_var: sends Authorization: Bearer ${" .. bearer .. "}")
  end
  if has_headers then e.headers = headers end
  local oa = take("oauth")
  if oa ~= nil then e.oauth = M:oauth(oa, doc, note) end

  -- tools
  local allow, akey = take("includeTools", "enabled_tools", "tools", "allowedTools", "allow")
  if allow ~= nil then
    if is_table(allow) and is_list(allow) then
      local all = false
      for _, x in ipairs(allow) do if x == "*" then all = true end end
      if all then
        note("info", akey .. " [\"*\"] offers every tool")
      else
        e.allow = allow
        if akey ~= "allow" then note("info", akey .. " is tai's tool allow list") end
      end
    else
      note("warn", akey .. " is not a list of tool names; it is ignored")
    end
  end
  local deny, dkey = take("excludeTools", "disabled_tools", "disabledTools", "deny")
  if deny ~= nil then
    if is_table(deny) and is_list(deny) then
      e.deny = deny
      if dkey ~= "deny" then note("info", dkey .. " is tai's tool deny list") end
    else
      note("warn", dkey .. " is not a list of tool names; it is ignored")
    end
  end

  -- sandbox: tai's own field, passed to Go as written (false,
  -- "required" or {read=, write=, network=, required=}); Go checks it
  local sandbox = take("sandbox")
  if sandbox ~= nil then e.sandbox = sandbox end

  -- enablement
  local enabled = take("enabled")
  local disabled = take("disabled")
  if type(enabled) == "boolean" then
    e.enabled = enabled
  elseif type(disabled) == "boolean" then
    e.enabled = not disabled
  end
  if e.enabled == false then
    note("info", "the paste disables this server: it is kept, not enabled")
  elseif e.enabled == true then
    note("info", "the paste enables this server for the profile that adds it")
  end

  -- known keys tai does not use
  for _, k in ipairs(order) do
    local why = M.ignored[k]
    if rest[k] ~= nil and why then
      note(k:find("env") and "warn" or "info", string.format("ignored %s: %s", k, why))
      rest[k] = nil
    elseif rest[k] ~= nil and (k:sub(1, 1) == "_" or k:sub(1, 2) == "//") then
      note("info", string.format("ignored %q: a comment", k))
      rest[k] = nil
    end
  end
  if rest.name ~= nil and ctx.bare_names then rest.name = nil end
  -- anything left is for Go to name as unknown
  for k, v in pairs(rest) do
    if e[k] == nil then e[k] = v end
  end

  -- transport from the fields, when none was given
  if e.transport == nil then
    if e.url ~= nil and e.command == nil then
      e.transport = "http"
      note("info", "url without a type: Streamable HTTP (\"http\")")
      if type(e.url) == "string" and e.url:match("/sse/?$") then
        note("warn", "the url ends in /sse, which usually means the legacy SSE transport tai does not speak; if connecting fails, look for the server's Streamable HTTP address (often ending in /mcp)")
      end
    elseif e.command ~= nil then
      e.transport = "stdio"
    end
  end
  return e
end

-- oauth(raw, doc, note) maps a pasted oauth object onto tai's: a client
-- id, its secret as a ${NAME} reference, a callback port, a client ID
-- metadata document URL; nil when it sets none of them.
---@param raw any
---@param doc table
---@param note fun(level: string, text: string)
---@return table|nil
function M:oauth(raw, doc, note)
  if not is_table(raw) then
    note("warn", "oauth is a " .. type(raw) .. ", not an object; it is ignored")
    return nil
  end
  local o, has, ignored, unknown = {}, false, {}, {}
  for _, k in ipairs(M.keys(doc, raw)) do
    local v, field = raw[k], M.oauth_keys[k]
    if field == "redirect" then
      local p = type(v) == "string" and v:match("^https?://[^/?#]*:(%d+)[/?#]?") or nil
      if p then
        o.callback_port = tonumber(p)
        has = true
        note("info", string.format("oauth.%s: tai's login listens on its port, %s; register http://127.0.0.1:%s/callback with the provider", k, p, p))
      else
        ignored[#ignored + 1] = k
      end
    elseif field == "client_secret" and type(v) == "string" then
      local n = v:match("^%$([%a_][%w_]*)$") or v:match("^%${env:([%a_][%w_]*)}$")
      o.client_secret = n and "${" .. n .. "}" or v
      has = true
    elseif field then
      o[field] = v
      has = true
    elseif M.oauth_ignored[k] then
      ignored[#ignored + 1] = k
    else
      unknown[#unknown + 1] = k
      o[k] = v
    end
  end
  if #ignored > 0 then
    note("info", "ignored oauth " .. quote_list(ignored) .. ": tai discovers the authorization server, its endpoints and the scope itself, and logs in when asked (/mcp login)")
  end
  if o.client_id ~= nil then
    note("info", "oauth.client_id: tai logs in as this client, registered with the provider by hand")
  end
  if type(o.client_secret) == "string" and o.client_secret:match("^%${[%a_][%w_]*}$") then
    note("info", "oauth.client_secret " .. o.client_secret .. " is read from the vault: store it with tai.vault.secret_set(\"" .. o.client_secret:sub(3, -2) .. "\", \"…\")")
  end
  if not has and #unknown == 0 then return nil end
  return o
end

-- rewrite(e, fn) applies fn to every string tai expands.
local function rewrite(e, fn)
  if type(e.command) == "string" then e.command = fn(e.command, "command") end
  if type(e.url) == "string" then e.url = fn(e.url, "url") end
  if type(e.cwd) == "string" then e.cwd = fn(e.cwd, "cwd") end
  if is_table(e.args) then
    for i, a in ipairs(e.args) do
      if type(a) == "string" then e.args[i] = fn(a, "args") end
    end
  end
  for _, f in ipairs({ "env", "headers" }) do
    if is_table(e[f]) then
      for k, v in pairs(e[f]) do
        if type(v) == "string" then e[f][k] = fn(v, f) end
      end
    end
  end
end

-- variables(name, e, ctx): Cursor's ${env:NAME} becomes ${NAME}; a bare
-- $NAME (upper case, as Gemini CLI and Copilot write it) in env and
-- headers becomes ${NAME}.
---@param name string
---@param e table
---@param ctx table
function M:variables(name, e, ctx)
  local env_form, bare = false, {}
  rewrite(e, function(s, field)
    if s:find("${env:", 1, true) then
      s = s:gsub("%${env:([%a_][%w_]*)", function(n) env_form = true return "${" .. n end)
    end
    if (field == "env" or field == "headers") and s:find("$", 1, true) then
      s = s:gsub("()%$([%u_][%u%d_]*)", function(pos, n)
        if pos > 1 and s:sub(pos - 1, pos - 1) == "$" then return nil end
        bare[#bare + 1] = n
        return "${" .. n .. "}"
      end)
    end
    return s
  end)
  if env_form then ctx:note(name, "info", "Cursor's ${env:NAME} is written ${NAME}") end
  if #bare > 0 then
    ctx:note(name, "info", "read $" .. table.concat(bare, ", $") .. " as ${" .. table.concat(bare, "}, ${") .. "}")
  end
end

-- inputs(name, e, ctx): VS Code's ${input:ID} is read from the vault
-- secret ID; an input's default becomes the reference's default.
---@param name string
---@param e table
---@param ctx table
function M:inputs(name, e, ctx)
  local used, order = {}, {}
  rewrite(e, function(s)
    if not s:find("${input:", 1, true) then return s end
    return (s:gsub("%${input:([%w_.%-]+)}", function(id)
      if not used[id] then used[id] = true order[#order + 1] = id end
      local input = ctx.inputs and ctx.inputs[id]
      if input and type(input.default) == "string" then
        return "${input:" .. id .. ":-" .. input.default .. "}"
      end
    end))
  end)
  for _, id in ipairs(order) do
    local input = ctx.inputs and ctx.inputs[id]
    local what = input and type(input.description) == "string" and (" (" .. input.description .. ")") or ""
    local default = input and type(input.default) == "string" and string.format("; unset, it is %q", input.default) or ""
    ctx:note(name, "info", string.format("${input:%s}%s is read from the vault secret %q: store it with tai.vault.secret_set(%q, \"…\")%s", id, what, id, id, default))
  end
end

-- platform(name, e, ctx): npx on Windows runs through cmd /c; elsewhere a
-- cmd /c wrapper is taken off. uvx is never wrapped.
---@param name string
---@param e table
---@param ctx table
function M:platform(name, e, ctx)
  local goos = ctx.doc.goos or "linux"
  if type(e.command) ~= "string" then return end
  local base = e.command:lower():match("([^/\\]+)$") or ""
  if goos == "windows" then
    if base == "npx" then
      local args = { "/c", e.command }
      for _, a in ipairs(e.args or {}) do args[#args + 1] = a end
      e.command, e.args = "cmd", args
      ctx:note(name, "info", "npx runs through cmd /c on Windows")
    end
  elseif (base == "cmd" or base == "cmd.exe") and is_table(e.args) and type(e.args[1]) == "string" and e.args[1]:lower() == "/c" and type(e.args[2]) == "string" then
    local args = {}
    for i = 3, #e.args do args[#args + 1] = e.args[i] end
    ctx:note(name, "info", string.format("cmd /c is how Windows starts %s; on %s tai runs %s directly", e.args[2], goos, e.args[2]))
    e.command, e.args = e.args[2], args
  end
end

-- hints(name, e, ctx): remarks on what an entry does that a person may
-- want to change.
---@param name string
---@param e table
---@param ctx table
function M:hints(name, e, ctx)
  if not is_table(e.args) then return end
  local base = type(e.command) == "string" and (e.command:match("([^/\\]+)$") or "") or ""
  for i, a in ipairs(e.args) do
    if a == "mcp-remote" and type(e.args[i + 1]) == "string" and e.args[i + 1]:match("^https?://") and not e.args[i + 1]:match("/sse/?$") then
      ctx:note(name, "info", string.format("mcp-remote bridges a remote server over stdio; tai speaks Streamable HTTP itself, so {\"url\": %q} works too", e.args[i + 1]))
      break
    end
  end
  if base == "docker" then
    for i, a in ipairs(e.args) do
      local v = e.args[i + 1]
      if (a == "-e" or a == "--env") and type(v) == "string" and not v:find("=", 1, true) and not (is_table(e.env) and e.env[v] ~= nil) then
        ctx:note(name, "warn", string.format("docker -e %s passes %s on from docker's own environment, but stdio servers get only a safe base environment: add \"env\": {%q: \"${%s}\"} to pass it", v, v, v, v))
      end
    end
  end
end

-- Names --------------------------------------------------------------------

-- slug(s) makes s follow the name rule: lowercase letters, digits, - and _.
---@param s string
---@return string
function M.slug(s)
  if not s:find("[^%l%d_%-]") and not s:find("^[-_]") and not s:find("[-_]$") and #s <= 64 and not s:find("--", 1, true) then
    return s
  end
  s = s:lower():gsub("[^%w_%-]+", "-"):gsub("%-%-+", "-"):gsub("^[-_]+", ""):gsub("[-_]+$", "")
  if #s > 64 then s = s:sub(1, 64):gsub("[-_]+$", "") end
  return s
end

-- package_name(spec) turns a package or image into a server name:
-- @modelcontextprotocol/server-memory → memory, mcp/fetch → fetch.
---@param spec string
---@return string
function M.package_name(spec)
  local scope, pkg = spec:match("^@([^/]+)/(.+)$")
  if not scope then
    pkg = spec:gsub(":[%w._-]+$", "") -- an image tag
    scope, pkg = pkg:match("^(.-)/?([^/]+)$")
    scope = scope and scope:match("([^/]+)$") or ""
  end
  pkg = pkg:gsub("@[^@/]*$", "")
  local n = pkg:lower()
  for _, p in ipairs({ "mcp-server-", "server-", "mcp-", "mcp_server_" }) do
    if n:sub(1, #p) == p and #n > #p then n = n:sub(#p + 1) break end
  end
  for _, p in ipairs({ "-mcp-server", "-mcp", "-server", "_mcp", "-mcp-bridge" }) do
    if n:sub(-#p) == p and #n > #p then n = n:sub(1, -#p - 1) break end
  end
  if n == "" or n == "mcp" or n == "mcp-server" or n == "server" then n = scope end
  return M.slug(n or "")
end

-- wildcard_dns are domains whose names resolve to the address spelled in
-- them (app.10.0.0.5.sslip.io → 10.0.0.5), or to loopback (true).
local wildcard_dns = {
  ["nip.io"] = false, ["sslip.io"] = false, ["xip.io"] = false, ["traefik.me"] = false,
  ["localtest.me"] = true, ["lvh.me"] = true,
}

-- generic_labels name no server: mcp.notion.com is notion.
local generic_labels = { mcp = true, api = true, www = true }

-- url_name(url) turns a URL into a server name: https://mcp.context7.com/mcp
-- → context7, https://api.githubcopilot.com/mcp/ → githubcopilot; a
-- loopback address names the port: http://127.0.0.1:8765/mcp → local-8765;
-- another IP address is spelled out: http://10.0.0.5/mcp → host-10-0-0-5.
-- Numeric labels name nothing, and a wildcard DNS name is read for the
-- label before its address, else as that address:
-- http://notes.127.0.0.1.nip.io:8080 → notes, http://mcp.127.0.0.1.nip.io:8080
-- → local-8080.
---@param url string
---@return string
function M.url_name(url)
  local authority = url:match("^%a[%w+.-]*://([^/?#]+)") or url
  authority = authority:gsub("^.*@", "") -- user info is no part of the name
  local host, port = authority:match("^%[([^%]]*)%]:?(%d*)$")
  if not host then host, port = authority:match("^([^:]*):?(%d*)$") end
  host = (host or authority):lower():gsub("%.$", "")
  local function by_address(ip)
    if ip == "localhost" or ip:match("^127%.") or ip == "::1" or ip == "0.0.0.0" then
      return port ~= "" and ("local-" .. port) or "local"
    end
    return M.slug("host-" .. ip .. (port ~= "" and ("-" .. port) or ""))
  end
  if host == "localhost" or host:match("^[%d.]+$") or host:find(":", 1, true) then
    return by_address(host)
  end
  local labels = {}
  for l in host:gmatch("[^.]+") do labels[#labels + 1] = l end
  local address
  for suffix, loopback in pairs(wildcard_dns) do
    if host == suffix or host:sub(-#suffix - 1) == "." .. suffix then
      labels = {}
      for l in host:sub(1, -#suffix - 2):gmatch("[^.]+") do labels[#labels + 1] = l end
      address = loopback and "127.0.0.1" or nil
      local n = #labels
      if n >= 4 and table.concat(labels, ".", n - 3, n):match("^%d+%.%d+%.%d+%.%d+$") then
        address = table.concat(labels, ".", n - 3, n)
        for _ = 1, 4 do table.remove(labels) end
      elseif n >= 1 then
        local before, dashed = labels[n]:match("^(.-)%-?(%d+%-%d+%-%d+%-%d+)$")
        if dashed then
          address = dashed:gsub("%-", ".")
          labels[n] = before ~= "" and before or nil
        end
      end
      break
    end
  end
  if not address and #labels > 1 then labels[#labels] = nil end -- the top-level domain
  for _, l in ipairs(labels) do
    if not l:match("^%d+$") and not generic_labels[l] then return M.slug(l) end
  end
  if address then return by_address(address) end
  return M.slug(labels[1] or host)
end

local runners = { npx = true, bunx = true, uvx = true, pnpx = true, ["npx.cmd"] = true }
local docker_value_flags = {
  ["-e"] = true, ["--env"] = true, ["-v"] = true, ["--volume"] = true, ["--mount"] = true, ["-p"] = true,
  ["--publish"] = true, ["--name"] = true, ["--network"] = true, ["-w"] = true, ["--workdir"] = true,
  ["--env-file"] = true, ["--entrypoint"] = true, ["-u"] = true, ["--user"] = true, ["--platform"] = true,
}

-- package_arg(e) returns the word of e's argv that names what it runs
-- and its kind: the package after a runner (npx, uvx, pnpm dlx, …) and
-- its flags ("package", with its index in args), the image after docker
-- or podman run and its flags ("image"); else nil. base is the command's
-- own name (cmd /c unwrapped).
---@param e table
---@return string|nil
---@return string|nil
---@return integer|nil
---@return string|nil
function M.package_arg(e)
  if type(e.command) ~= "string" then return nil end
  local base = (e.command:match("([^/\\]+)$") or e.command):lower():gsub("%.exe$", "")
  local args = is_table(e.args) and e.args or {}
  local i = 1
  if base == "cmd" and args[1] and args[1]:lower() == "/c" then
    base = (args[2] or ""):lower()
    i = 3
  end
  if runners[base] or base == "pipx" or base == "pnpm" or base == "yarn" or base == "deno" then
    while args[i] do
      local a = args[i]
      if a == "run" or a == "dlx" or a == "exec" then
      elseif a:sub(1, 1) ~= "-" then
        return a, "package", i, base
      end
      i = i + 1
    end
  elseif base == "docker" or base == "podman" then
    local seen_run = false
    while args[i] do
      local a = args[i]
      if not seen_run then
        seen_run = a == "run"
      elseif docker_value_flags[a] then
        i = i + 1
      elseif a:sub(1, 1) ~= "-" then
        return a, "image", i, base
      end
      i = i + 1
    end
  end
  return nil, nil, nil, base
end

-- derive(e) names an entry after its package, image or URL.
---@param e table
---@return string|nil
---@return string|nil
function M.derive(e)
  if e.transport == "http" or (e.command == nil and type(e.url) == "string") then
    return type(e.url) == "string" and M.url_name(e.url) or nil, "its URL"
  end
  if type(e.command) ~= "string" then return nil end
  local a, kind, i, base = M.package_arg(e)
  if kind == "package" then
    if a == "mcp-remote" then
      for j = i + 1, #e.args do
        if e.args[j]:match("^https?://") then return M.url_name(e.args[j]), "the URL it bridges" end
      end
    end
    return M.package_name(a), "its package"
  elseif kind == "image" then
    return M.package_name(a), "its image"
  end
  return M.slug(base), "its command"
end

-- name(name, e, ctx) returns the entry's name under the rule, deriving one
-- for a bare entry.
---@param name any
---@param e table
---@param ctx table
---@return string|nil
function M:name(name, e, ctx)
  if type(name) ~= "string" or name == "" then
    local derived, from = M.derive(e)
    if derived and derived ~= "" then
      ctx:note(derived, "info", string.format("no name was given; named it %q after %s", derived, from))
      return derived
    end
    return nil
  end
  local s = M.slug(name)
  if s ~= name and s ~= "" then
    ctx.slugged = ctx.slugged or {}
    if ctx.slugged[s] or (ctx.names and ctx.names[s]) then
      -- two pasted names that differ only in case or punctuation
      local n = 2
      while ctx.slugged[s .. "-" .. n] or (ctx.names and ctx.names[s .. "-" .. n]) do n = n + 1 end
      s = s .. "-" .. n
    end
    ctx.slugged[s] = true
    ctx:note(s, "info", string.format("named %q (from %q): names are lowercase letters, digits, - and _", s, name))
  end
  return s ~= "" and s or name
end

-- The whole document ---------------------------------------------------------

---@param doc table
---@return table[]
---@return table[]
function M:normalize(doc)
  local notes = {}
  local ctx = { doc = doc, inputs = nil }
  function ctx:note(server, level, text)
    notes[#notes + 1] = { server = server or "", level = level, text = text }
  end
  ctx.refused = {}
  function ctx:refuse(server, text)
    self.refused[server or ""] = true
    self:note(server, "refused", text)
  end
  local entries = {}
  local servers = self:servers(doc, ctx)
  ctx.names = {}
  for _, s in ipairs(servers) do
    if type(s.name) == "string" then ctx.names[s.name] = true end
  end
  for _, s in ipairs(servers) do
    local raw_name = s.name
    ctx.bare_names = s.name == nil or s.bare
    local label = type(raw_name) == "string" and raw_name ~= "" and raw_name or "entry " .. (#entries + 1)
    local e = self:entry(label, s.raw, ctx)
    if e and ctx.refused[label] then
      e = nil -- refused part way (a field of the wrong kind): the note says why
    end
    if e then
      local name = self:name(raw_name, e, ctx)
      -- notes made under the pasted name follow the entry's final name
      if name and name ~= label then
        for _, n in ipairs(notes) do
          if n.server == label then n.server = name end
        end
      end
      label = name or label
      self:variables(label, e, ctx)
      self:inputs(label, e, ctx)
      self:platform(label, e, ctx)
      self:hints(label, e, ctx)
      e.name = name
      entries[#entries + 1] = e
    end
  end
  return entries, notes
end

return M
