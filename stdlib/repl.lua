-- repl.lua: the interactive loop. Everything here may be replaced by a
-- user's own lua/tai/repl.lua (or lua/repl.lua), or wrapped from init.lua:
--   local repl = require("tai.repl")
--   repl.prompt = function() return os.date("%H:%M") .. " tai> " end
--   repl.chat = function(text) ... end   -- what plain text does
local tai = require("tai")
local inspect = require("tai.inspect")
local chatview = require("tai.chatview")
local prompts = require("tai.promptcommand")

local M = {}

-- prompt() -> string shown before each line: the profile, and the
-- approval mode when tools run without asking ("tai:default [auto]> ").
---@return string
function M.prompt()
  local marks = {}
  if tai.mode ~= "interactive" then marks[#marks + 1] = tai.mode end
  if M.shell_unsandboxed() then marks[#marks + 1] = "no sandbox"
  elseif M.shell_lifted() then marks[#marks + 1] = "sandbox off" end
  local mode = #marks > 0 and (" [" .. table.concat(marks, ", ") .. "]") or ""
  return M.paint("1;36", "tai:" .. tai.profile) .. mode .. "> "
end

-- shell_unsandboxed() says whether the current profile turns the shell's
-- sandbox off (sandbox = false): then the prompt says "no sandbox", as it
-- says --yolo.
---@return boolean
function M.shell_unsandboxed()
  local ok, p = pcall(tai.profiles.current)
  return ok and type(p) == "table" and p.sandbox == false
end

-- shell_lifted() says whether the person lifted the shell's sandbox for
-- the rest of this session (/sandbox off): then the prompt says "sandbox off".
---@return boolean
function M.shell_lifted()
  local ok, off = pcall(tai.sandbox.session_off)
  return ok and off == true
end

-- shell_sandbox_warning(p) is the warning shown when the profile p turns
-- the shell's sandbox off, or nil.
---@param p any
---@return string|nil
function M.shell_sandbox_warning(p)
  if type(p) ~= "table" or p.sandbox ~= false then return nil end
  return "⚠ the shell's sandbox is off: profile " .. chatview.clean(tostring(p.name)) .. " says sandbox = false, so the commands the model runs " ..
    "can read your keys, your credentials and the vault's folder; tai.profiles.save{…, sandbox = true} turns it back on"
end

-- continuation is the prompt for the further lines of a message or block.
M.continuation = "... "

-- paint(code, text) wraps text in an ANSI colour when colour is on.
---@param code string
---@param text string
---@return string
function M.paint(code, text)
  if tai.term.color() then
    return "\27[" .. code .. "m" .. text .. "\27[0m"
  end
  return text
end

-- say(text) and warn(text) tell the person something through
-- tai.notify (replace it in init.lua to route tai's messages elsewhere).
---@param text any
function M.say(text)
  tai.notify(tostring(text), "info")
end

---@param text string
function M.warn(text)
  tai.notify(tostring(text), "warn")
end

-- view is the display of the running turn (nil between turns).
M.view = nil

-- conv is the conversation (see chat.conversation): kept in the vault as
-- it goes, resumed by tai -c and /resume.
M.conv = nil

-- context_limit is the size in tokens of the model's context that the
-- warning before it fills up counts against; warn_at the share of it.
M.context_limit = 128000
M.warn_at = 0.8

-- tool_share is the share of context_limit the schemas of every enabled
-- tool may take and all be offered to the model; past it tai offers a
-- choice and the model finds the rest with tool_search.
M.tool_share = 0.10

-- last_tools is the tool selection of the last turn (tai.chat's tools:
-- offered, available, tokens, selected), for /tools and /context.
M.last_tools = nil

-- show_usage says whether each turn ends with its token usage.
M.show_usage = true

-- markdown says whether answers colour code blocks and headings (when
-- colour is on).
M.markdown = true

-- context_size() estimates the tokens the next request starts with: the
-- system message and the history.
---@return integer
function M.context_size()
  return tai.estimate_tokens(M.conv.system or "") + tai.estimate_tokens(M.conv.history())
end

-- chat(text) handles a line that is neither a command, an expression nor a
-- config block: one agent turn on the current profile, the answer streamed,
-- tool calls shown as they happen, the token usage after it. Known secrets
-- are redacted from the message and the answer. Ctrl-C cancels the turn.
-- A turn that ended at the step limit or was cut off at the output limit
-- says so. The conversation is kept in the vault after each turn.
-- messages, when given, open the turn before text (a server's prompt:
-- /SERVER:PROMPT).
---@param text string
---@param messages? table[]
function M.chat(text, messages)
  M.rl:watch_escape(true) -- Esc stops the turn, as Ctrl-C does
  local tty = tai.term.isatty()
  M.view = chatview.new({ write = tai.term.write, note = tai.term.write, spinner = tty,
    redactor = tai.vault.redactor(), markdown = M.markdown and tai.term.color(), width = tai.term.width() })
  local opts = M.view.opts(M.conv.opts())
  opts.tool_budget = chatview.tool_budget()
  opts.messages = messages
  local answer, d = tai.chat(chatview.redacted(M.conv.message(M.attach(text))), opts)
  M.conv.turned()
  M.view.finish()
  M.view = nil
  -- a first turn that failed (no model, say) starts no conversation
  if answer or d == "interrupted" or M.conv.id then
    local saved, serr = M.conv.save()
    if not saved then M.warn("(" .. chatview.clean(tostring(serr)) .. ")") end
  end
  if not answer then
    if d == "interrupted" then
      M.say("(turn cancelled)")
    else
      M.warn(chatview.clean(chatview.redacted(chatview.profile_hint(d))))
    end
    return
  end
  M.conv.count(d)
  M.last_tools = d.tools
  for _, n in ipairs(chatview.notices(d)) do M.warn("(" .. n .. ")") end
  if M.show_usage then M.say(M.paint("2", "  " .. chatview.usage_line(d, M.conv.usage))) end
  M.check_context()
end

-- attach_max bounds one file attached with @path, attach_count how many
-- one message attaches.
M.attach_max = 64 * 1024
M.attach_count = 8

-- attach(text) adds the files a message names with @path (regular files,
-- relative to the working directory) and the MCP resources it names with
-- @server:uri after it, so the model has them without a tool call; names
-- that are no file are left as they are.
---@param text string
---@return string
function M.attach(text)
  local parts, seen = {}, {}
  -- @server:uri mentions first: they are no file
  local files = require("tai.mcpcommand").attach_resources(text, parts, M.attach_count)
  for path in files:gmatch("@([%w%._%-/~]+)") do
    path = path:gsub("[%.,;:]+$", "")
    local full = path
    if path:sub(1, 1) == "~" then full = (os.getenv("HOME") or "") .. path:sub(2)
    elseif path:sub(1, 1) ~= "/" then full = tai.cwd() .. "/" .. path end
    if not seen[full] and #parts < M.attach_count and tai.file_kind(full) == "file" then
      seen[full] = true
      local body, truncated = tai.read_text(full, M.attach_max)
      if body then
        local note = truncated and string.format("\n[… cut at %d bytes; read_file reads the rest]", M.attach_max) or ""
        parts[#parts + 1] = string.format("[File %s:]\n%s%s", path, body, note)
        M.say(M.paint("2", string.format("  (attached %s, %d bytes%s)", chatview.clean(path), #body, truncated and ", cut" or "")))
      end
    end
  end
  -- an @word that names no file goes to the model as written: say so
  for path in ("\n" .. files):gmatch("%s@([%w%._%-/~]+)") do
    path = path:gsub("[%.,;:]+$", "")
    local full = path
    if path:sub(1, 1) == "~" then full = (os.getenv("HOME") or "") .. path:sub(2)
    elseif path:sub(1, 1) ~= "/" then full = tai.cwd() .. "/" .. path end
    if not seen[full] and tai.file_kind(full) ~= "file" then
      seen[full] = true
      M.say(M.paint("2", "  (no file " .. chatview.clean(path) .. " here: @" .. chatview.clean(path) .. " is sent as text)"))
    end
  end
  if #parts == 0 then return text end
  return text .. "\n\n" .. table.concat(parts, "\n\n")
end

-- check_context() warns when the conversation nears the model's context
-- and offers to compact it.
function M.check_context()
  local n = M.context_size()
  if n < M.context_limit * M.warn_at then return end
  M.warn(string.format("(the conversation is about %s tokens, %d%% of the %s the model's context holds (repl.context_limit))",
    chatview.thousands(n), math.floor(n * 100 / M.context_limit), chatview.thousands(M.context_limit)))
  if chatview.confirm(M.rl, "  compact it now (the model summarizes it and tai continues from the summary)? [y/N] ") then
    M.compact()
  end
end

-- before_prompt() ends the partly written line of a running turn before a
-- consent screen or a question.
function M.before_prompt()
  if M.view then M.view.before_question() end
end

local function words(s)
  local out = {}
  for w in s:gmatch("%S+") do out[#out + 1] = w end
  return out
end

local function find_command(name)
  for _, c in ipairs(tai.commands()) do
    if c.name == name then return c end
  end
end

local function show_results(ok, ...)
  if not ok then
    local err = ...
    M.warn(tostring(err))
    return
  end
  local n = select("#", ...)
  for i = 1, n do
    M.say(inspect((select(i, ...))))
  end
end

-- eval(text) evaluates a Lua expression (or, failing that, a statement) and
-- prints what it returns.
---@param text string
function M.eval(text)
  local fn, err = loadstring("return " .. text, "(repl)")
  if not fn then
    fn, err = loadstring(text, "(repl)")
  end
  if not fn then
    M.warn(err)
    return
  end
  show_results(tai.term.protect(fn))
end

-- read_lines(first, done) reads further lines until done(line) is true, a
-- blank line or end of input. It returns the lines, or nil when Ctrl-C
-- cancelled the block.
---@param first string
---@param done fun(line: string): boolean
---@return string[]|nil
function M.read_lines(first, done)
  local lines = { first }
  if done(first) then return lines end
  while true do
    local line, err = M.rl:read(M.continuation)
    if not line then
      if err == "interrupt" then return nil end
      return lines
    end
    if line:match("^%s*$") then return lines end
    lines[#lines + 1] = line
    if done(line) then return lines end
  end
end

-- lua_block([first]) reads a multi-line chunk ended by a line holding
-- only "." and runs it; first is what came with /lua in the same message.
---@param first? string
---@return nil
function M.lua_block(first)
  local lines = {}
  -- a paste may hold the chunk already, its "." line included
  for line in ((first or "") .. "\n"):gmatch("([^\n]*)\n") do
    if line:match("^%s*%.%s*$") then
      local fn, err = loadstring(table.concat(lines, "\n"), "(lua)")
      if not fn then M.warn(err) return end
      return show_results(tai.term.protect(fn))
    end
    if #lines > 0 or line ~= "" then lines[#lines + 1] = line end
  end
  while true do
    local line, err = M.rl:read(M.continuation)
    if not line then
      if err == "interrupt" then M.say("(cancelled)") return end
      break
    end
    if line:match("^%s*%.%s*$") then break end
    lines[#lines + 1] = line
  end
  local fn, err = loadstring(table.concat(lines, "\n"), "(lua)")
  if not fn then M.warn(err) return end
  show_results(tai.term.protect(fn))
end

-- Config blocks ------------------------------------------------------------

-- config_keys are the keys a bare TOML line may start a pasted MCP
-- config with: the server tables, or the fields of one entry.
M.config_keys = {
  mcpServers = true, servers = true, mcp_servers = true, context_servers = true, mcp = true,
  command = true, url = true, args = true, env = true, type = true, transport = true, headers = true, cwd = true,
}

-- balance() returns a scanner that, fed line after line, says when the
-- braces and brackets outside strings have closed.
local function balance()
  local depth, opened, in_string, escaped = 0, false, false, false
  return function(line)
    for i = 1, #line do
      local c = line:sub(i, i)
      if in_string then
        if escaped then escaped = false
        elseif c == "\\" then escaped = true
        elseif c == '"' then in_string = false end
      elseif c == '"' then in_string = true
      elseif c == "{" or c == "[" then depth = depth + 1 opened = true
      elseif c == "}" or c == "]" then depth = depth - 1 end
    end
    return opened and depth <= 0
  end
end

-- block_kind(line) says whether a line starts a pasted config block:
-- "json", "json-fragment" ("name": {…} without the outer braces), "toml",
-- or nil (chat). A line that is complete by itself counts only when it
-- parses; an opening line only when it opens the way configs do (a lone
-- brace, or a brace and a quoted key); a TOML key = value line only when
-- the key is one an MCP config starts with.
---@param line string
---@return string|nil
function M.block_kind(line)
  local s = line:match("^%s*(.-)%s*$")
  if s:match("^%[%[?%s*[%a_][%w_%-%.\"]*%s*%]%]?$") then return "toml" end
  if s:match("^{") or s:match("^%[%s*[{%[\"%d%-]") or s == "[" then
    if balance()(s) then
      local _, err = tai.json.decode(s)
      if err then return nil end
      return "json"
    end
    if s:match("^[{%[]%s*$") or s:match("^{%s*\"") or s:match("^%[%s*[{%[]%s*$") or s:match("^%[%s*{%s*\"") then
      return "json"
    end
    return nil
  end
  if s:match("^\"[^\"]*\"%s*:%s*[{%[]") then
    if balance()(s) then
      local _, err = tai.json.decode("{" .. s:gsub(",%s*$", "") .. "}")
      if err then return nil end
    end
    return "json-fragment"
  end
  local key = s:match("^([%a_][%w_%-]*)%s*=%s*[\"'%[{%d]")
  if key and M.config_keys[key] then
    local _, err = tai.toml.decode(s)
    if err and not s:match("[%[{]%s*$") then return nil end
    return "toml"
  end
  return nil
end

local server_keys = { "mcpServers", "servers", "mcp_servers", "context_servers", "mcp" }

local function keys_of(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = tostring(k) end
  table.sort(keys)
  return keys
end

-- describe(value) -> one line saying what a parsed config holds.
---@param v any
---@return string
function M.describe(v)
  if type(v) ~= "table" then
    return "a single " .. type(v) .. " value, not a config"
  end
  if #v > 0 then
    return "a list of " .. #v .. " entries"
  end
  for _, key in ipairs(server_keys) do
    local servers = v[key]
    if type(servers) == "table" and #servers == 0 then
      local names = keys_of(servers)
      return string.format("%s with %d server%s: %s", key, #names, #names == 1 and "" or "s", table.concat(names, ", "))
    end
  end
  local keys = keys_of(v)
  if #keys == 0 then return "an empty object" end
  return "an object with keys: " .. table.concat(keys, ", ")
end

-- entry_fields are the fields an MCP server entry holds in the configs of
-- the clients tai reads: an object with command or url and only these is
-- one server's entry.
M.entry_fields = {}
for _, k in ipairs({
  "command", "args", "env", "cwd", "url", "httpUrl", "serverUrl", "type", "transport", "headers", "name",
  "description", "disabled", "enabled", "autoApprove", "alwaysAllow", "autoapprove", "timeout", "trust",
  "includeTools", "excludeTools", "envFile", "env_file", "startup_timeout_sec", "startup_timeout_ms",
  "tool_timeout_sec", "enabled_tools", "disabled_tools", "disabledTools", "working_directory", "workingDirectory",
  "start_on_launch", "source", "settings", "oauth", "bearer_token_env_var", "http_headers", "env_http_headers",
  "env_vars", "tools", "allow", "deny", "sandbox", "inputs", "$schema", "environment", "requestInit", "cmd",
  "gallery", "version", "id", "enabledTools", "roots", "instructions",
}) do M.entry_fields[k] = true end

-- entry_shape(v) says what a decoded object is as one server's entry:
-- "entry" (command or url and only entry fields), "mixed" (command or
-- url beside fields no client writes), or nil.
local function entry_shape(v)
  if type(v) ~= "table" then return nil end
  local has = v.command ~= nil or v.url ~= nil or v.httpUrl ~= nil or v.serverUrl ~= nil
  if not has then return nil end
  for k in pairs(v) do
    if type(k) ~= "string" or not M.entry_fields[k] then return "mixed" end
  end
  return "entry"
end

-- value_shape(v) is paste_shape for a decoded value.
local function value_shape(v)
  if type(v) ~= "table" then return "data" end
  if #v > 0 then return "data" end
  for k, sub in pairs(v) do
    if type(k) == "string" and type(sub) == "table" then
      local base = k:match("([^%.]+)$")
      if base == "mcpServers" or base == "servers" or base == "mcp_servers" or base == "context_servers" or base == "mcp" then
        return "config"
      end
    end
  end
  local one = entry_shape(v)
  if one == "entry" then return "config" end
  if one == "mixed" then return "ask" end
  -- servers keyed by name, without the table around them
  local entries, others = 0, 0
  for k, sub in pairs(v) do
    local e = entry_shape(sub)
    if e then
      entries = entries + 1
    elseif not (type(k) == "string" and k:match("^[_$]")) then
      others = others + 1 -- "_comment" and "$schema" are notes, not data
    end
  end
  if entries > 0 and others == 0 then return "config" end
  if entries > 0 then return "ask" end
  return "data"
end

-- paste_shape(text) says what a pasted JSON or TOML block is: "config"
-- when it has an MCP shape (an mcpServers, servers, mcp_servers,
-- context_servers or mcp table, or one entry with command or url and
-- nothing foreign, or such entries keyed by name), "data" for anything
-- else (a JSON object, a package.json, a Cargo.toml: it goes to the
-- model), "ask" when it could be either. Text that does not parse as
-- JSON, a JSON fragment or TOML is a config when the normalizer reads a
-- server from it or it names what configs hold (so its error is shown).
---@param text string
---@return "config"|"data"|"ask"
function M.paste_shape(text)
  local body = text:gsub("^%s*```[%w]*\n", ""):gsub("\n```%s*$", "")
  local v, err = tai.json.decode(body)
  if err then
    local frag = body:match("^%s*(\".*)$")
    if frag then v, err = tai.json.decode("{" .. frag:gsub(",%s*$", "") .. "}") end
  end
  if err then v, err = tai.toml.decode(body) end
  if not err then return value_shape(v) end
  local entries = tai.mcp.normalize(text)
  if entries and #entries > 0 then return "config" end
  for _, word in ipairs({ "mcpServers", "mcp_servers", "context_servers", "\"servers\"", "\"command\"", "\"url\"",
    "serverUrl", "httpUrl", "^%s*command%s*=", "\n%s*command%s*=", "^%s*url%s*=", "\n%s*url%s*=" }) do
    if body:find(word) then return "config" end
  end
  return "data"
end

-- looks_yaml(text) says whether a pasted block reads as YAML (a docker
-- compose file, a CI workflow): its first line a key or "---", and most
-- of its lines keys, list items or comments. tai reads no YAML config, so
-- such a paste goes to the model, with data_note.
---@param text string
---@return boolean
function M.looks_yaml(text)
  local lines, keyish, first = 0, 0, nil
  for l in text:gmatch("[^\n]+") do
    if l:match("%S") then
      lines = lines + 1
      first = first or l
      if l:match("^%s*[%w_%-%.\"']+:%s") or l:match("^%s*[%w_%-%.\"']+:$") or l:match("^%s*%- ") or l:match("^%s*#") then
        keyish = keyish + 1
      end
    end
  end
  if lines < 2 or not first then return false end
  if not (first:match("^%-%-%-") or first:match("^[%w_%-%.\"']+:%s") or first:match("^[%w_%-%.\"']+:$")) then return false end
  return keyish * 3 >= lines * 2
end

-- data_note is said when a paste that looked like a config goes to the
-- model.
M.data_note = "sent to the model (not an MCP config)"

-- config_block(first, kind [, whole]) reads the rest of a pasted block
-- (or takes the whole paste, when given) and hands it to mcp.offer when
-- it is an MCP config (see paste_shape), else to the model; when it could
-- be either, one key decides.
---@param first string
---@param kind string
---@param whole? string
---@return nil
function M.config_block(first, kind, whole)
  local lines
  if whole then
    lines = {}
    for l in (whole .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = l end
    while #lines > 0 and lines[#lines]:match("^%s*$") do lines[#lines] = nil end
  elseif kind == "toml" then
    lines = M.read_lines(first, function() return false end)
  else
    lines = M.read_lines(first, balance())
  end
  if not lines then
    M.say("(paste cancelled)")
    return
  end
  local text = table.concat(lines, "\n")
  local shape = M.paste_shape(text)
  if shape == "ask" then
    local a, err = chatview.choose(M.rl, "this may be an MCP server config: [a]dd it as one, or Enter: send it to the model [M/a] ",
      { "m", "a" }, M.say)
    if not a then M.say("(paste cancelled)") return end
    shape = a == "a" and "config" or "data"
  end
  if shape == "data" then
    M.say(M.data_note)
    M.remember(text)
    return M.chat(text)
  end
  -- The normalizer parses it (JSONC, TOML, fragments) and says what is
  -- wrong and where; mcp.offer shows each server before asking to add.
  require("tai.mcpcommand").offer(text)
end

-- Commands -----------------------------------------------------------------

M.done = false

local columns = chatview.columns

local function pad(s, n)
  return s .. string.rep(" ", n - columns(s))
end

local builtin = {}

-- name_lines(rows, cols) is one line per {name, text}: the names padded to
-- one width, then the text cut to cols columns (80 when cols is 0, as off
-- a terminal) with … so that no row takes two lines.
local function name_lines(rows, cols)
  if cols <= 0 then cols = 80 end
  local width = 0
  for _, r in ipairs(rows) do width = math.max(width, columns(r[1])) end
  local out = {}
  for _, r in ipairs(rows) do
    local head = "  " .. pad(r[1], width) .. "  "
    out[#out + 1] = head .. chatview.short(r[2], math.max(cols - 1 - columns(head), 8))
  end
  return out
end

-- help_lines(commands, cols) is /help's list: one line per command, its
-- name and the first line of its help, cut to cols columns (name_lines).
---@param commands table[]
---@param cols integer
---@return string[]
function M.help_lines(commands, cols)
  local rows = {}
  for _, c in ipairs(commands) do
    rows[#rows + 1] = { "/" .. c.name, ((c.help:match("^[^\n]*") or ""):gsub("%s+", " ")) }
  end
  return name_lines(rows, cols)
end

-- topic_lines(topics, cols) is the list of help topics: one line each,
-- the name then the summary, cut to cols columns as help_lines cuts.
---@param topics table[]
---@param cols integer
---@return string[]
function M.topic_lines(topics, cols)
  local rows = {}
  for _, t in ipairs(topics) do rows[#rows + 1] = { t.name, t.summary } end
  return name_lines(rows, cols)
end

-- say_lines prints text line by line.
local function say_lines(text)
  if text:sub(-1) ~= "\n" then text = text .. "\n" end
  for line in text:gmatch("([^\n]*)\n") do M.say(line) end
end

-- help_search prints the lines of every topic holding word, each after
-- its topic's name.
local function help_search(word)
  if word == "" then M.warn("/help search needs a word: /help search vault") return end
  local found = assert(tai.help.search(word))
  if #found == 0 then
    M.warn("no topic says " .. word .. "; /help lists the topics")
    return
  end
  local width = 0
  for _, m in ipairs(found) do width = math.max(width, columns(m.topic)) end
  local cols = tai.term.width()
  if cols <= 0 then cols = 80 end
  for _, m in ipairs(found) do
    local head = pad(m.topic, width) .. "  "
    M.say(head .. chatview.short(m.text:gsub("^%s+", ""), math.max(cols - 1 - columns(head), 8)))
  end
  M.say(string.format("(%d line%s; /help TOPIC reads one)", #found, #found == 1 and "" or "s"))
end

builtin.help = {
  help = "the manual and the commands; /help TOPIC, /help search WORD",
  fn = function(rest)
    local name = rest:match("^%s*(%S+)")
    if name == "search" then
      help_search(rest:match("^%s*search%s*(.-)%s*$"))
      return
    end
    if name then
      local bare = name:gsub("^/", "")
      local c = find_command(bare)
      if not c and prompts.split(bare) then
        local p, err = prompts.find(bare)
        if not p then M.warn(err) return end
        for _, l in ipairs(prompts.describe(p)) do M.say(l) end
        return
      end
      local text = name:sub(1, 1) ~= "/" and tai.help.topic(bare)
      if not c and not text then
        M.warn("no topic or command " .. name .. "; /help lists them, /help search " .. bare .. " searches the topics")
        return
      end
      if c then
        local first = true
        for line in (c.help .. "\n"):gmatch("([^\n]*)\n") do
          M.say(first and ("/" .. c.name .. "  " .. line) or ("  " .. line))
          first = false
        end
      end
      if text then
        if c then M.say("") end
        say_lines(text)
      end
      return
    end
    M.say("Topics of the manual (/help TOPIC reads one, /help search WORD searches them):")
    for _, l in ipairs(M.topic_lines(assert(tai.help.topics()), tai.term.width())) do M.say(l) end
    M.say("")
    M.say("Commands (/help COMMAND shows one in full):")
    for _, l in ipairs(M.help_lines(tai.commands(), tai.term.width())) do M.say(l) end
    M.say("")
    local server_prompts = prompts.commands()
    if #server_prompts > 0 then
      M.say("Prompts of MCP servers (/SERVER:PROMPT name=value …; /help /SERVER:PROMPT shows its arguments):")
      local by = {}
      for _, c in ipairs(server_prompts) do
        if not by[c.server] then by[c.server] = {}; by[#by + 1] = c.server end
        table.insert(by[c.server], c)
      end
      for _, server in ipairs(by) do
        M.say("  " .. chatview.clean(server))
        for _, l in ipairs(prompts.help_lines(server, by[server], tai.term.width() - 2, M.help_lines)) do M.say("  " .. l) end
      end
      M.say("")
    end
    M.say("  plain text    one turn with the model of the current profile (/profile)")
    M.say("  = expr        evaluate Lua and print the result (tables pretty-printed)")
    M.say("  !command      run a shell command; its output goes with your next message")
    M.say("  @path         in a message attaches that file (Tab completes paths)")
    M.say("  @server:uri   attaches an MCP server's resource (Tab completes both)")
    M.say("  a paste       is one message; a pasted JSON or TOML MCP config is read whole")
    M.say("  Alt-Enter     (or Ctrl-J, or a trailing \\) starts a further line")
    M.say("  Tab           completes commands and their arguments")
    M.say("  Ctrl-C        cancels the line or the running command; Ctrl-D quits")
    M.say("  history       " .. tai.term.history_file())
  end,
  complete = function(word)
    local out = {"search"}
    for _, t in ipairs(tai.help.topics() or {}) do out[#out + 1] = t.name end
    for _, c in ipairs(tai.commands()) do out[#out + 1] = c.name end
    return out
  end,
}

builtin.quit = {
  help = "leave tai (Ctrl-D does the same)",
  fn = function() M.done = true end,
}

builtin.exit = {
  help = "leave tai, as /quit and Ctrl-D do",
  fn = function() M.done = true end,
}

builtin.secret = {
  help = "store a secret in the vault, its value typed without echo: /secret NAME\n" ..
    "a config uses it as ${NAME}, a profile as key_secret = NAME",
  fn = function(rest)
    local name = rest:match("^%s*([%w_%-%.]+)%s*$")
    if not name then
      M.warn("usage: /secret NAME (letters, digits, _ - .); the value is asked for without echo")
      return
    end
    local value, err = tai.term.read_hidden("value of " .. name .. " (not shown; Ctrl-C cancels): ")
    if not value then
      if err == "interrupt" then M.say("(cancelled; nothing stored)") else M.warn(err .. "; nothing stored") end
      return
    end
    if value == "" then M.warn("nothing stored: the value is empty") return end
    local ok, serr = tai.vault.secret_set(name, value)
    if not ok then M.warn(tostring(serr)) return end
    M.say("(stored " .. name .. " in the vault; ${" .. name .. "} in a config uses it)")
  end,
}

builtin.seal = {
  help = "seal the vault: secrets and server headers encrypted at rest under a passphrase\n" ..
    "(asked twice, or TAI_VAULT_PASSPHRASE); on a sealed vault it changes the passphrase",
  fn = function(rest)
    if rest:match("%S") then
      M.warn("usage: /seal (no words: the passphrase is asked for, twice, without echo, or read from TAI_VAULT_PASSPHRASE)")
      return
    end
    local was = tai.vault.sealed()
    local ok, err = tai.vault.seal({ short = function(n)
      M.warn(string.format("that passphrase has only %d character%s: the seal is only as strong as it is (8 or more is safer)", n, n == 1 and "" or "s"))
      return chatview.confirm(M.rl, "  seal with it anyway? [y/N] ")
    end })
    if not ok then M.warn(tostring(err)) return end
    if was then
      M.say("(the vault's passphrase is changed)")
    else
      M.say("(the vault is sealed: secrets and server headers are encrypted at rest; tai asks for the passphrase when it needs them)")
    end
  end,
}

builtin.unseal = {
  help = "unseal the vault: the audit trail is checked with the passphrase (asked, or\n" ..
    "TAI_VAULT_PASSPHRASE), then secrets and server headers are stored in the clear",
  fn = function(rest)
    if rest:match("%S") then
      M.warn("usage: /unseal (no words: the passphrase is asked for without echo, or read from TAI_VAULT_PASSPHRASE)")
      return
    end
    local n, err = tai.vault.unseal()
    if not n then M.warn(tostring(err)) return end
    local trail = n == 0 and "its audit trail was empty" or string.format("its audit trail verified (%d entries)", n)
    M.say("(the vault is unsealed: " .. trail .. "; secrets and server headers are stored in the clear now)")
  end,
}

builtin.open = {
  help = "/open N saves the Nth image, audio or blob a tool gave in this conversation\n" ..
    "(numbered as shown: [image 2: …]) to a private temporary file, and opens it when there is a display",
  fn = function(rest)
    local n, count = tonumber(rest), tai.media.count()
    if count == 0 then M.warn("nothing to open: no tool has given an image, audio or blob in this conversation") return end
    if not n or n ~= math.floor(n) then
      M.warn(count == 1 and "give the number shown in brackets: the only one is /open 1" or ("give the number shown in brackets: /open 1 to /open " .. count))
      return
    end
    local path, opened, why = tai.media.open(n)
    if not path then M.warn(tostring(opened)) return end
    if opened then M.say("(opened " .. path .. ")")
    elseif why and why ~= "" then M.say("(saved to " .. path .. "; not opened: " .. why .. ")")
    else M.say("(saved to " .. path .. ")") end
  end,
}

builtin.lua = {
  help = "run a multi-line Lua chunk, ended by a line holding only .\n" ..
    "or pasted whole with /lua as its first line",
  fn = function(rest) M.lua_block(rest) end,
}

-- Profiles -------------------------------------------------------------------

local profile_fields = { "provider", "model", "base_url", "key_env", "key_secret", "system", "max_tokens", "max_tokens_field", "tools" }

-- describe_profile(p) -> lines showing a profile; keys are named by where
-- they live, never shown.
---@param p table
---@return string
function M.describe_profile(p)
  local lines = { p.name .. (p.current and "  (current)" or "") }
  for _, k in ipairs(profile_fields) do
    local v = p[k]
    if v ~= nil and v ~= "" then
      if type(v) == "table" then v = table.concat(v, ", ") end
      lines[#lines + 1] = string.format("  %-10s %s", k, tostring(v))
    end
  end
  if p.sandbox == false then lines[#lines + 1] = "  sandbox    off: shell commands run with all of your rights" end
  return table.concat(lines, "\n")
end

-- parse_fields(text) reads key=value pairs; a value may be "double quoted"
-- to hold blanks.
---@param text string
---@return table<string, string>|nil
---@return string|nil
function M.parse_fields(text)
  local out, pos = {}, 1
  while true do
    local s, e, key = text:find("^%s*([%w_]+)=", pos)
    if not s then break end
    local value
    if text:sub(e + 1, e + 1) == '"' then
      local close = text:find('"', e + 2, true)
      if not close then return nil, "unclosed quote in the value of " .. key end
      value = text:sub(e + 2, close - 1)
      pos = close + 1
    else
      local vs, ve = text:find("^%S*", e + 1)
      value = text:sub(vs, ve)
      pos = ve + 1
    end
    out[key] = value
  end
  if text:sub(pos):match("%S") then
    return nil, "cannot read '" .. text:sub(pos):match("^%s*(.-)%s*$") .. "': write fields as key=value (quote values with blanks)"
  end
  return out
end

-- builtin_profiles are the profiles that exist without being stored:
-- default (the environment's key, else a local Ollama) and ollama.
M.builtin_profiles = { "default", "ollama" }

local function all_profiles()
  local list, err = tai.profiles.list()
  if not list then return nil, err end
  local seen = {}
  for _, p in ipairs(list) do
    seen[p.name] = true
    p.builtin = p.stored == false
  end
  for _, name in ipairs(M.builtin_profiles) do
    if not seen[name] then
      local p = tai.profiles.get(name)
      if p then
        p.builtin = true
        p.current = p.name == tai.profile or (name == "default" and tai.profile == p.name)
        if p.name ~= name then p.resolves_to = p.name p.name = name p.current = false end
        list[#list + 1] = p
        seen[name] = true
      end
    end
  end
  table.sort(list, function(a, b) return a.name < b.name end)
  return list
end

local function profile_names()
  local out = {}
  for _, p in ipairs(all_profiles() or {}) do out[#out + 1] = p.name end
  return out
end

-- listed_profile(p [, asked]) is p as /profiles lists it (with whether it
-- is built-in), found by the name asked for or its own.
---@param p table
---@param asked? string
---@return table
function M.listed_profile(p, asked)
  for _, q in ipairs(all_profiles() or {}) do
    if q.name == (asked or p.name) then return q end
  end
  return p
end

-- profile_note(p) says where a built-in profile's model comes from.
---@param p table
---@return string|nil
function M.profile_note(p)
  if p.provider == "ollama" and p.resolves_to == "ollama" and not chatview.env_key() then
    return "a local Ollama at 127.0.0.1:11434, as no OPENAI_API_KEY or ANTHROPIC_API_KEY is set"
  end
  if p.provider == "ollama" and p.name == "ollama" then
    return "a local Ollama at 127.0.0.1:11434"
  end
  if (p.builtin or p.stored == false) and p.key_env then
    return "from the environment: " .. tostring(p.key_env)
  end
  return nil
end

-- offer_servers(from, to) offers to enable for the new profile to the
-- MCP servers enabled for the profile from (Enter: yes).
---@param from string
---@param to string
function M.offer_servers(from, to)
  local list = tai.mcp.list()
  local names = {}
  for _, s in ipairs(list or {}) do
    for _, p in ipairs(s.profiles or {}) do
      if p == from then names[#names + 1] = s.name end
    end
  end
  if #names == 0 or from == to then return end
  local a = chatview.choose(M.rl, string.format("enable for %s the MCP servers enabled for %s (%s)? [Y/n] ", to, from,
    chatview.short(table.concat(names, ", "), 120)), { "y", "n" }, M.say)
  if a ~= "y" then
    M.say("(no server enabled for " .. to .. "; /mcp enable SERVER… " .. to .. " enables some)")
    return
  end
  local done = {}
  for _, server in ipairs(names) do
    local ok, err = tai.mcp.enable({ server = server, profile = to })
    if ok then done[#done + 1] = server else M.warn(chatview.clean(tostring(err))) end
  end
  if #done > 0 then M.say(table.concat(done, ", ") .. " enabled for profile " .. to) end
end

builtin.profile = {
  help = "show the current profile, or: show|use|delete NAME, new NAME …\n" ..
    "/profile show [NAME], /profile use NAME switches, /profile delete NAME,\n" ..
    "/profile new NAME provider=… model=… [base_url=… key_env=…|key_secret=… system=\"…\"] creates one",
  fn = function(rest, w)
    local sub = w[1]
    if not sub or (sub == "show" and not w[2]) then
      local p, err = tai.profiles.current()
      if not p then M.warn(err) return end
      p.current = true
      M.say(M.describe_profile(p))
      local note = M.profile_note(M.listed_profile(p))
      if note then M.say("  (" .. note .. ")") end
      return
    end
    if sub == "use" then
      if not w[2] then M.warn("usage: /profile use NAME (/profiles lists them)") return end
      local p, err = tai.profiles.use(w[2])
      if not p then M.warn(err) return end
      M.conv.rebuild()
      M.say("now using profile " .. p.name .. " (" .. p.provider .. (p.model and p.model ~= "" and (", " .. p.model) or "") .. ")")
      local shell_off = M.shell_sandbox_warning(p)
      if shell_off then M.warn(shell_off) end
      if w[2] == "default" and p.name == "ollama" then
        M.say("(default resolves to a local Ollama at 127.0.0.1:11434: no OPENAI_API_KEY or ANTHROPIC_API_KEY is set)")
      end
      for _, l in ipairs(require("tai.mcpcommand").profile_lines(p.name)) do M.say("  " .. l) end
      return
    end
    if sub == "new" then
      local name = w[2]
      if not name or name:find("=", 1, true) then
        local names = {}
        for _, pr in ipairs(tai.profiles.providers()) do names[#names + 1] = pr.name end
        M.warn("usage: /profile new NAME provider=" .. table.concat(names, "|") .. " model=… [base_url=…] [key_env=VAR | key_secret=NAME] [system=\"…\"]")
        return
      end
      local fields, err = M.parse_fields(rest:match("^%s*new%s+%S+(.*)$") or "")
      if not fields then M.warn(err) return end
      fields.name = name
      if fields.max_tokens then fields.max_tokens = tonumber(fields.max_tokens) end
      if fields.tools then
        local list = {}
        for t in fields.tools:gmatch("[^,%s]+") do list[#list + 1] = t end
        fields.tools = list
      end
      local ok, saved, msg = pcall(tai.profiles.save, fields)
      if not ok then M.warn(saved) return end
      if not saved then M.warn(msg) return end
      M.say("saved profile " .. name .. "; /profile use " .. name .. " switches to it")
      M.offer_servers(tai.profile, name)
      return
    end
    if sub == "show" then
      local p, err = tai.profiles.get(w[2])
      if not p then M.warn(err) return end
      p.current = p.name == tai.profile
      M.say(M.describe_profile(p))
      local note = M.profile_note(M.listed_profile(p, w[2]))
      if note then M.say("  (" .. note .. ")") end
      return
    end
    if sub == "delete" then
      if not w[2] then M.warn("usage: /profile delete NAME") return end
      local ok, err = tai.profiles.delete(w[2])
      if not ok then M.warn(err) return end
      M.say("deleted profile " .. w[2] .. "; now using " .. tai.profile)
      return
    end
    M.warn("unknown /profile subcommand " .. sub .. "; use /profile, /profile use NAME, /profile show [NAME], /profile delete NAME or /profile new NAME …")
  end,
  complete = function(word, line)
    local rest = line:match("^%s*/profile%s+(.*)$") or ""
    if not rest:find("%s") then return { "use", "new", "show", "delete" } end
    if rest:match("^use%s+%S*$") or rest:match("^show%s+%S*$") then return profile_names() end
    if rest:match("^delete%s+%S*$") then
      local out = {}
      for _, p in ipairs(all_profiles() or {}) do if not p.builtin then out[#out + 1] = p.name end end
      return out
    end
    if rest:match("^new%s+%S+%s") then
      local out = {}
      for _, k in ipairs(profile_fields) do out[#out + 1] = k .. "=" end
      return out
    end
    return {}
  end,
}

builtin.profiles = {
  help = "list the model profiles (* marks the current one), built-in ones included",
  fn = function()
    local list, err = all_profiles()
    if not list then M.warn(err) return end
    for _, p in ipairs(list) do
      local note = ""
      if p.builtin then note = "  (built-in: " .. (M.profile_note(p) or "from the environment") .. ")" end
      M.say(string.format("%s %-16s %-9s %s%s", p.current and "*" or " ", p.name, p.provider, p.model or "", note))
    end
  end,
}

builtin.new = {
  help = "start a new conversation (the current one is kept: /resume finds it)",
  fn = function()
    M.conv.start()
    M.say("(new conversation)")
  end,
}

builtin.clear = {
  help = "clear the screen and start a new conversation",
  fn = function()
    M.conv.start()
    if tai.term.isatty() then tai.term.write("\27[H\27[2J\27[3J") end
    M.say("(new conversation)")
  end,
}

-- ago(t) renders how long ago the Unix time t was.
local function ago(t)
  local d = os.time() - t
  if d < 90 then return "just now" end
  if d < 3600 then return math.floor(d / 60) .. " min ago" end
  if d < 86400 then return math.floor(d / 3600) .. " h ago" end
  return math.floor(d / 86400) .. " days ago"
end

-- home_relative(dir) shortens a path under $HOME to ~/….
local function home_relative(dir)
  local home = os.getenv("HOME")
  if home and home ~= "" and dir:sub(1, #home) == home then return "~" .. dir:sub(#home + 1) end
  return dir
end

builtin.resume = {
  help = "list recent conversations; /resume N|ID continues one, /resume WORDS searches\n" ..
    "each shown with when, where, its first line and its turns; WORDS search the first lines",
  fn = function(rest, w)
    local searched = false
    local list, err = tai.conversations.list(w[1] and not w[1]:match("^c?%d+$") and 200 or 20)
    if not list then M.warn(err) return end
    if w[1] and not w[1]:match("^c?%d+$") then
      -- /resume WORDS lists the conversations whose first line holds them
      local want, found = rest:lower(), {}
      for _, c in ipairs(list) do
        if (c.title or ""):lower():find(want, 1, true) then found[#found + 1] = c end
      end
      list, w, searched = found, {}, true
      if #list == 0 then M.say("(no kept conversation starts with a line holding " .. chatview.short(rest, 60) .. ")") return end
    end
    if not w[1] then
      if #list == 0 then M.say("(no conversations kept yet)") return end
      for i, c in ipairs(list) do
        M.say(string.format("%3s  %-6s %-12s %-30s %s  (%d turn%s)%s", searched and "" or tostring(i), c.id, ago(c.updated), chatview.short(home_relative(c.dir), 30),
          chatview.short(c.title ~= "" and c.title or "(empty)", 60), c.turns, c.turns == 1 and "" or "s",
          c.id == M.conv.id and "  ← this one" or ""))
      end
      M.say(searched and "/resume ID continues one" or "/resume N or /resume ID continues one; /resume WORDS searches the first lines")
      return
    end
    local id = w[1]
    if tonumber(id) then
      local c = list[tonumber(id)]
      if not c then M.warn("no conversation " .. id .. " in the list; /resume lists them") return end
      id = c.id
    end
    local c, gerr = tai.conversations.get(id)
    if not c then M.warn(gerr) return end
    M.conv.start()
    local ok, rerr = M.conv.resume(c)
    if not ok then M.warn(rerr) return end
    M.say(string.format("(resumed %s: %s, %d turn%s, %s)", c.id, chatview.short(c.title, 60), c.turns, c.turns == 1 and "" or "s", ago(c.updated)))
    M.show_last(c.messages)
  end,
  complete = function()
    local out = {}
    for _, c in ipairs(tai.conversations.list(20) or {}) do out[#out + 1] = c.id end
    return out
  end,
}

-- show_last(messages) prints the last exchange of a resumed conversation.
---@param messages table[]
function M.show_last(messages)
  local last_user, last_answer
  for _, m in ipairs(messages or {}) do
    if m.role == "user" then last_user = m.content end
    if m.role == "assistant" and m.content and m.content ~= "" then last_answer = m.content end
  end
  if last_user then M.say(M.paint("2", "  you: " .. chatview.short(last_user, 160))) end
  if last_answer then M.say(M.paint("2", "  model: " .. chatview.short(last_answer, 160))) end
end

-- model_cache holds the model lists seen, by profile name.
local model_cache = {}

local function model_names()
  local key = tai.profile
  if model_cache[key] == nil then
    local list = tai.models()
    if list then
      -- names from the server go into the line being edited: plain ones only
      local plain = {}
      for _, n in ipairs(list) do
        if n:match("^[%w%._:/@%-]+$") then plain[#plain + 1] = n end
      end
      list = plain
    end
    model_cache[key] = list or false
  end
  return model_cache[key] or {}
end

-- picks_by_family(name) says whether a profile of provider name that names
-- no model picks one by tai.model_families.
---@param name string
---@return boolean
local function picks_by_family(name)
  for _, pr in ipairs(tai.profiles.providers()) do
    if pr.name == name then return pr.picks_by_family end
  end
  return false
end

-- model_line(p) names p's model, and how it was chosen when p names none.
---@param p table
---@return string
function M.model_line(p)
  local model = p.model ~= nil and p.model ~= "" and chatview.short(p.model, 120)
  if not model and picks_by_family(p.provider) then
    local families = table.concat(tai.model_families(p.provider), ", ")
    if p.model_chosen then
      model = chatview.short(p.model_chosen, 120) .. " (the newest of " .. families .. " the key could use, kept from the first turn)"
    else
      model = "(the newest of " .. families .. " the key can use, picked on the first turn)"
    end
  end
  model = model or "(the first model Ollama lists)"
  return "model " .. model .. " on profile " .. p.name .. " (" .. p.provider .. ")"
end

builtin.model = {
  help = "show the model; /model NAME switches to it for this session\n" ..
    "Tab completes NAME from the provider's list. With no model named\n" ..
    "(TAI_MODEL, a profile's model), tai takes the newest model of the\n" ..
    "families tai.model_families(provider) lists that the key can use",
  fn = function(rest, w)
    if not w[1] then
      local p, err = tai.profiles.current()
      if not p then M.warn(err) return end
      M.say(M.model_line(p))
      local list, lerr = tai.models()
      if list and #list > 0 then
        model_cache[tai.profile] = nil -- model_names() keeps the plain names only
        M.say("the provider lists: " .. chatview.clean(tai.term.clean(table.concat(list, ", "), true)))
      elseif not list then
        M.say("(the provider offers no model list: " .. chatview.short(lerr, 160) .. ")")
      end
      return
    end
    local p, err = tai.model(w[1])
    if not p then M.warn(err) return end
    M.say("now using model " .. chatview.short(p.model, 120) .. " for this session (profile " .. p.name .. " keeps " .. "its own; /profile new saves one)")
    -- a name the provider does not list is kept, but never silently
    local list = tai.models()
    if list and #list > 0 then
      for _, n in ipairs(list) do
        if n == p.model then return end
      end
      local near = {}
      for _, n in ipairs(chatview.closest(p.model, list, 3)) do near[#near + 1] = tai.term.clean(n, true) end
      M.warn("the provider does not list " .. chatview.short(p.model, 120) .. "; the closest it lists: " ..
        table.concat(near, ", ") .. " (kept anyway: the next turn shows whether the provider takes it; /model lists them all)")
    end
  end,
  complete = function() return model_names() end,
}

-- fold(s, n) cuts s into lines of at most n columns, at spaces where it can.
local function fold(s, n)
  local out = {}
  while columns(s) > n do
    local cut = 0
    for i = 1, #s do
      if columns(s:sub(1, i)) > n then break end
      if s:sub(i, i) == " " then cut = i end
    end
    if cut == 0 then
      local take = ""
      for ch in s:gmatch("[%z\1-\127\194-\244][\128-\191]*") do
        if columns(take) + 1 > n then break end
        take = take .. ch
      end
      out[#out + 1], s = take, s:sub(#take + 1)
    else
      out[#out + 1], s = s:sub(1, cut - 1), s:sub(cut + 1)
    end
  end
  out[#out + 1] = s
  return out
end

-- table_lines(rows, cols) lays out /tools' rows {mark, name, safe|asks,
-- origin, what} in columns within cols terminal columns (0: no limit): a
-- name longer than its column has a line of its own, an origin longer
-- than its column is cut with "…", and what is folded onto lines of its
-- own column.
---@param rows table[]
---@param cols integer
---@return string[]
function M.table_lines(rows, cols)
  local nw, ow = 0, 0
  for _, r in ipairs(rows) do
    nw, ow = math.max(nw, columns(r[2])), math.max(ow, columns(r[4]))
  end
  nw, ow = math.min(nw, 48), math.max(math.min(ow, 40), 6)
  local function fixed() return 1 + 1 + nw + 2 + 4 + 2 + ow + 2 end
  if cols > 0 then
    while cols - fixed() < 30 and ow > 24 do ow = ow - 1 end
    while cols - fixed() < 30 and nw > 16 do nw = nw - 1 end
    while cols - fixed() < 30 and ow > 12 do ow = ow - 1 end
  end
  local out = {}
  local indent = string.rep(" ", fixed())
  for _, r in ipairs(rows) do
    local name = r[2]
    if columns(name) > nw then
      out[#out + 1] = r[1] .. " " .. name
      name = ""
    end
    local origin = columns(r[4]) > ow and chatview.short(r[4], ow) or r[4]
    local head = r[1] .. " " .. pad(name, nw) .. "  " .. pad(r[3], 4) .. "  " .. pad(origin, ow) .. "  "
    local what = cols > 0 and fold(r[5], math.max(cols - fixed(), 20)) or { r[5] }
    out[#out + 1] = (head .. what[1]):gsub("%s+$", "")
    for i = 2, #what do out[#out + 1] = indent .. what[i] end
  end
  return out
end

builtin.tools = {
  help = "list the tools the model may call: built in, from Lua and from MCP servers\n" ..
    "each safe (runs at once) or asking first, where it comes from, and * when offered on the last turn",
  fn = function()
    local list, err = tai.tools()
    if not list then M.warn(err) return end
    local bridged = tai.mcp.tools() or {}
    table.sort(list, function(a, b) return a.name < b.name end)
    local last = {}
    for _, n in ipairs(M.last_tools and M.last_tools.offered or {}) do last[n] = true end
    local rows = {}
    for _, t in ipairs(list) do
      local first = (t.description or ""):match("^(.-%.)%s") or (t.description or ""):match("^[^\n]*")
      rows[#rows + 1] = { last[t.name] and "*" or " ", chatview.short(t.name, 80), t.safe and "safe" or "asks",
        chatview.short(t.origin or "", 80), chatview.short(first, 300) }
    end
    local here = 0
    for _, t in ipairs(bridged) do
      if t.offered then here = here + 1 end
      -- a reason says its state itself ("withheld: …", "refused: …")
      local state = t.state .. (t.offered and ", offered here" or "")
      if t.reason and t.reason ~= "" then state = t.reason end
      rows[#rows + 1] = { last[t.name] and "*" or " ", tai.term.clean(t.name, true), "asks",
        tai.term.clean(t.server .. "/" .. t.tool, true), chatview.short(chatview.clean(state), 90) }
    end
    for _, l in ipairs(M.table_lines(rows, tai.term.width())) do M.say(l) end
    M.say(string.format("%d tools built in or from Lua, %d from MCP servers (%d offered to this profile); \"asks\" ones run only after you approve them (unless --auto or --yolo)",
      #list, #bridged, here))
    local lt = M.last_tools
    if lt then
      M.say(string.format("* offered on the last turn: %d of %d%s", #lt.offered, lt.available,
        lt.selected and string.format(" (their schemas would take ~%s tokens, past %d%% of the context: the model finds the rest with tool_search)",
          chatview.thousands(lt.tokens), math.floor(M.tool_share * 100 + 0.5)) or ""))
    end
  end,
}

builtin.permissions = {
  help = "list this folder's rules (calls that run without asking); remove N drops one\n" ..
    "[p] at the consent screen keeps a rule; /permissions remove N drops rule N",
  fn = function(rest, w)
    local list, err = tai.permissions.list()
    if not list then M.warn(err) return end
    if w[1] == "remove" then
      local n = tonumber(w[2] or "")
      local r = n and list[n]
      if not r then M.warn("usage: /permissions remove N, with N from the list /permissions shows") return end
      local ok, rerr = tai.permissions.remove(r)
      if not ok then M.warn(rerr) return end
      M.say("(removed: " .. chatview.short(r.tool .. (r.prefix and (": " .. r.prefix) or ""), 120) .. "; it asks again)")
      return
    elseif w[1] then
      M.warn("usage: /permissions, or /permissions remove N")
      return
    end
    if #list == 0 then
      M.say("no rules for " .. chatview.short(tai.cwd(), 160) .. "; [p] at a consent screen keeps one")
      return
    end
    M.say("calls that run without asking in " .. chatview.short(tai.cwd(), 160) .. ":")
    for i, r in ipairs(list) do
      local what = r.prefix and ("shell commands starting with " .. chatview.short(r.prefix, 100)) or ("every call of " .. chatview.short(r.tool, 100))
      if r.sandbox == false then what = what .. ", outside the sandbox" end
      M.say(string.format("  %d  %s  (kept %s)", i, what, (r.created or ""):sub(1, 10)))
    end
    M.say("/permissions remove N drops one")
  end,
  complete = function() return { "remove" } end,
}

builtin.sandbox = {
  help = "say whether the model's shell commands run in the sandbox\n" ..
    "/sandbox off lifts it for the rest of this session (until you quit); /sandbox on puts it back",
  fn = function(rest, w)
    if w[1] == "off" then
      local off, err = tai.sandbox.session_off(true)
      if off == nil then M.warn(err) return end
      M.warn("⚠ the shell's sandbox is off for the rest of this session: the commands the model runs can read your keys, " ..
        "your credentials and the vault's folder; /sandbox on turns it back on")
      return
    elseif w[1] == "on" then
      local off, err = tai.sandbox.session_off(false)
      if off == nil then M.warn(err) return end
    elseif w[1] then
      M.warn("usage: /sandbox, /sandbox off or /sandbox on")
      return
    end
    if M.shell_unsandboxed() then
      M.say("the shell's sandbox is off: profile " .. chatview.clean(tostring(tai.profile)) .. " says sandbox = false")
    elseif M.shell_lifted() then
      M.say("the shell's sandbox is off for the rest of this session (/sandbox off); /sandbox on turns it back on")
    else
      M.say("the model's shell commands run in the sandbox; /sandbox off lifts it for the rest of this session")
    end
  end,
  complete = function() return { "off", "on" } end,
}

builtin.usage = {
  help = "token usage of this session and the size of the conversation\n" ..
    "as the API's usage fields reported it",
  fn = function()
    local u = M.conv.usage
    M.say(string.format("session: %s tokens in, %s out, over %d turn%s", chatview.thousands(u.input), chatview.thousands(u.output),
      u.turns, u.turns == 1 and "" or "s"))
    if (u.unreported or 0) > 0 then
      M.say(string.format("(the provider reported no usage for %d of them, not counted)", u.unreported))
    end
    M.say(string.format("the next request starts with about %s tokens (estimated; repl.context_limit is %s)",
      chatview.thousands(M.context_size()), chatview.thousands(M.context_limit)))
  end,
}

-- prices are what a million tokens cost, by model name, for /cost:
-- { ["gpt-x"] = { input = 2.5, output = 10, currency = "$" } }. tai ships
-- none (a price list it cannot keep current would mislead); set the
-- prices you pay in init.lua: require("tai.repl").prices["gpt-x"] = {…}.
M.prices = {}

-- cost_line(usage, model) says what usage cost at the prices of model,
-- or nil when no price is set for it.
---@param usage {input: integer, output: integer}
---@param model string
---@return string|nil
function M.cost_line(usage, model)
  local p = M.prices[model]
  if type(p) ~= "table" or type(p.input) ~= "number" or type(p.output) ~= "number" then return nil end
  local cost = (usage.input * p.input + usage.output * p.output) / 1e6
  return string.format("cost: about %s%.4f at the prices set for %s (%s in, %s out a million tokens)",
    p.currency or "$", cost, model, p.input, p.output)
end

builtin.cost = {
  help = "token usage of this session and, when repl.prices holds the model's, its cost\n" ..
    "tai ships no price list: set require(\"tai.repl\").prices[MODEL] = {input=, output=} in init.lua",
  fn = function()
    builtin.usage.fn()
    local ok, p = pcall(tai.profiles.current)
    local model = ok and p and (p.model or p.model_chosen) or ""
    local line = M.cost_line(M.conv.usage, model)
    if line then
      M.say(line)
    else
      M.say("(no price set for " .. (model ~= "" and model or "this model") .. "; /help cost says how to set one)")
    end
  end,
}

-- head(text, full, max_lines, max_bytes) is the start of text as /context
-- shows it: whole lines up to max_lines and about max_bytes, a line cut
-- only between words, with a note of what is left ("" when nothing is, or
-- when full).
---@param text string
---@param full boolean
---@param max_lines integer
---@param max_bytes integer
---@return string shown
---@return string note
function M.head(text, full, max_lines, max_bytes)
  if full then return text, "" end
  local out, used, n = {}, 0, 0
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    if n >= max_lines or used >= max_bytes then break end
    if used + #line > max_bytes then
      local room = max_bytes - used
      local cut = line:sub(1, room):match("^(.*%S)%s") or line:sub(1, room)
      out[#out + 1] = cut .. " …"
      used = max_bytes
    else
      out[#out + 1] = line
      used = used + #line + 1
    end
    n = n + 1
  end
  local shown = table.concat(out, "\n")
  local left = #text - used
  if left <= 0 then return text, "" end
  return shown, string.format("(%s more bytes)", chatview.thousands(left))
end

-- init_files are the files /init reads to describe a project, besides
-- the list of its top folder: its README and what builds it.
M.init_files = { "README.md", "README", "go.mod", "package.json", "Cargo.toml", "pyproject.toml", "setup.py", "Makefile", "justfile" }

-- init_prompt asks the model for an AGENTS.md.
M.init_prompt = "Write an AGENTS.md for the repository described below: the instructions a coding agent needs to work " ..
  "in it. Cover what the project is (one paragraph), how to build, test and lint it (exact commands from its files), " ..
  "its layout, and the conventions its files show. Use only what the files say; never invent commands. Answer with " ..
  "the file's Markdown only, under 80 lines."

-- project_facts(dir) describes the project in dir for /init: the list of
-- its top folder, then the start of each of init_files it has.
---@param dir string
---@return string facts
---@return table<string, string> found the files read, by name
function M.project_facts(dir)
  local parts, found = {}, {}
  local r = tai.call("list_dir", { path = dir })
  if r and r.content and r.content[1] then parts[#parts + 1] = "Files at the top of " .. dir .. ":\n" .. r.content[1].text end
  for _, name in ipairs(M.init_files) do
    local text = tai.read_text(dir .. "/" .. name, 4096)
    if text then
      found[name] = text
      parts[#parts + 1] = "--- " .. name .. " (start) ---\n" .. text
    end
  end
  return table.concat(parts, "\n\n"), found
end

-- skeleton(found) is the AGENTS.md /init writes when no model answers:
-- the build and test commands the project's files imply, and the habits
-- every project wants.
---@param found table<string, string>
---@return string
function M.skeleton(found)
  local out = { "# AGENTS.md", "", "Instructions for coding agents working in this repository.", "" }
  local readme = found["README.md"] or found["README"]
  if readme then
    local para = readme:gsub("^%s*#[^\n]*\n", ""):match("^%s*(.-)\n%s*\n") or ""
    if para ~= "" then
      out[#out + 1] = "## What this is"
      out[#out + 1] = ""
      out[#out + 1] = para
      out[#out + 1] = ""
    end
  end
  local cmds = {}
  if found["go.mod"] then cmds[#cmds + 1] = "- Go: `go build ./...`, `go test ./...`, `go vet ./...`" end
  if found["package.json"] then
    local ok, pkg = pcall(tai.json.decode, found["package.json"])
    local scripts = ok and type(pkg) == "table" and pkg.scripts or {}
    local names = {}
    for k in pairs(type(scripts) == "table" and scripts or {}) do names[#names + 1] = "`npm run " .. k .. "`" end
    table.sort(names)
    cmds[#cmds + 1] = "- Node: `npm install`" .. (#names > 0 and (", " .. table.concat(names, ", ")) or "")
  end
  if found["Cargo.toml"] then cmds[#cmds + 1] = "- Rust: `cargo build`, `cargo test`, `cargo clippy`" end
  if found["pyproject.toml"] or found["setup.py"] then cmds[#cmds + 1] = "- Python: `pip install -e .`, `pytest`" end
  if found["Makefile"] then cmds[#cmds + 1] = "- `make` (see the Makefile's targets)" end
  if found["justfile"] then cmds[#cmds + 1] = "- `just --list` shows the recipes" end
  if #cmds > 0 then
    out[#out + 1] = "## Build and test"
    out[#out + 1] = ""
    for _, c in ipairs(cmds) do out[#out + 1] = c end
    out[#out + 1] = ""
  end
  out[#out + 1] = "## Working here"
  out[#out + 1] = ""
  out[#out + 1] = "- Read the code around a change before making it; keep changes small."
  out[#out + 1] = "- Run the tests before saying a change is done, and say what you could not check."
  return table.concat(out, "\n") .. "\n"
end

-- init() is /init: an AGENTS.md for the project in the working folder,
-- written by the model from the project's files when one answers, else a
-- skeleton from them; shown, and written only when the person agrees.
function M.init()
  local dir = tai.cwd()
  local path = dir .. "/AGENTS.md"
  if tai.file_kind(path) then
    M.warn("AGENTS.md exists here; /init leaves it as it is (edit it, or remove it and run /init again)")
    return
  end
  local facts, found = M.project_facts(dir)
  M.say("(reading the project and asking the model for an AGENTS.md…)")
  local text, d = tai.complete({ { role = "system", content = M.init_prompt }, { role = "user", content = chatview.redacted(facts) } })
  local how
  if text and text:match("%S") then
    text = text:gsub("^%s*```[%w]*\n", ""):gsub("\n```%s*$", "\n")
    how = "written by the model from the project's files; read it before you keep it"
  else
    text = M.skeleton(found)
    how = "a skeleton from the project's files: no model answered (" .. chatview.short(tostring(d):match("^[^\n]*"), 100) .. ")"
  end
  M.say(chatview.clean(text))
  M.say("(" .. how .. ")")
  if not chatview.confirm(M.rl, "write it to " .. chatview.clean(path) .. "? [y/N] ") then
    M.say("(nothing written)")
    return
  end
  local f, err = io.open(path, "w")
  if not f then M.warn("AGENTS.md was not written: " .. tostring(err)) return end
  f:write(text)
  f:close()
  M.say("(wrote " .. chatview.clean(path) .. "; the model reads it from the next message)")
end

builtin.init = {
  help = "write an AGENTS.md for this project after showing it\n" ..
    "written by the model from the project's files when one answers, else a skeleton from them",
  fn = function() M.init() end,
}

builtin.context = {
  help = "show what is sent with each message and its size in tokens\n" ..
    "the system prompt, the profile, AGENTS.md files, MCP servers' instructions and the history; sizes are estimated",
  fn = function(rest, w)
    local ok, p = pcall(tai.profiles.current)
    local parts = require("tai.context").parts(ok and p or nil)
    local total = 0
    for _, part in ipairs(parts) do
      local n = tai.estimate_tokens(part.text)
      total = total + n
      M.say(string.format("── %s · ~%s tokens", chatview.short(part.name, 200), chatview.thousands(n)))
      local shown, more = M.head(chatview.clean(part.text), w[1] == "all", 12, 1200)
      M.say(shown)
      if more ~= "" then M.say(M.paint("2", "   " .. more .. "; /context all shows everything")) end
    end
    for _, s in ipairs(select(3, require("tai.context").instructions(tai.cwd())) or {}) do
      M.say(M.paint("33", string.format("── %s not sent: %s", chatview.short(s.path, 200), chatview.clean(s.why))))
    end
    for _, s in ipairs(require("tai.context").mcp_instructions()) do
      local name = "MCP server " .. chatview.clean(s.server) .. "'s instructions"
      if s.state == "granted" then
        local n = tai.estimate_tokens(s.text)
        total = total + n
        M.say(string.format("── %s (its words, fenced, after the system prompt) · ~%s tokens", name, chatview.thousands(n)))
        local shown, more = M.head(chatview.clean(s.text), w[1] == "all", 12, 1200)
        M.say(shown)
        if more ~= "" then M.say(M.paint("2", "   " .. more .. "; /context all shows everything")) end
      else
        M.say(M.paint("33", string.format("── %s not sent: %s", name, chatview.clean(s.reason or s.state))))
      end
    end
    local h = M.conv.history() or {}
    local hn = tai.estimate_tokens(h)
    total = total + hn
    M.say(string.format("── history: %d message%s · ~%s tokens", #h, #h == 1 and "" or "s", chatview.thousands(hn)))
    if #M.conv.notes > 0 then M.say(string.format("── %d note%s from !commands go with the next message", #M.conv.notes, #M.conv.notes == 1 and "" or "s")) end
    M.say(string.format("in all about %s tokens (estimated at 4 bytes a token), before tool definitions", chatview.thousands(total)))
    local lt = M.last_tools
    if lt and lt.selected then
      M.say(string.format("── tools: %d of %d offered on the last turn: all their schemas would take ~%s tokens, past %d%% of repl.context_limit (repl.tool_share); the rest are reachable through tool_search",
        #lt.offered, lt.available, chatview.thousands(lt.tokens), math.floor(M.tool_share * 100 + 0.5)))
    elseif lt then
      M.say(string.format("── tools: all %d offered on the last turn, ~%s tokens of schemas", lt.available, chatview.thousands(lt.tokens)))
    end
  end,
  complete = function() return { "all" } end,
}

-- compact_prompt asks the model for the summary that /compact continues
-- from.
M.compact_prompt = "Summarize the conversation below so that it can be continued from the summary alone: the " ..
  "person's goals and requests, decisions taken, files and commands involved (with paths), what was done, what " ..
  "failed, and what remains open. Be complete but brief; write it as notes, not as a dialogue."

-- transcript(messages) renders a conversation as text for the summary.
---@param messages table[]
---@return string
function M.transcript(messages)
  local out = {}
  for _, m in ipairs(messages) do
    if m.role == "tool" then
      out[#out + 1] = "tool result (" .. tostring(m.name) .. "): " .. chatview.short(m.content or "", 1500)
    else
      if m.content and m.content ~= "" then out[#out + 1] = m.role .. ": " .. m.content end
      for _, tc in ipairs(m.tool_calls or {}) do
        out[#out + 1] = "assistant calls " .. tostring(tc.name) .. " " .. chatview.short(tc.arguments, 400)
      end
    end
  end
  return table.concat(out, "\n\n")
end

-- compact() has the model summarize the conversation and continues from
-- the summary: the history becomes that summary.
function M.compact()
  local h = M.conv.history()
  if #h == 0 then M.say("(nothing to compact: the conversation is empty)") return end
  local before = M.context_size()
  M.say("(summarizing " .. #h .. " messages…)")
  local summary, d = tai.complete({
    { role = "system", content = M.compact_prompt },
    { role = "user", content = M.transcript(h) },
  })
  if not summary then
    M.warn("the summary failed; the conversation is unchanged: " .. chatview.clean(tostring(d)))
    return
  end
  local ok, err = tai.chat_restore({
    { role = "user", content = "[The conversation so far, summarized to save context:]\n\n" .. summary },
    { role = "assistant", content = "Understood. I will continue from this summary." },
  }, M.conv.opts())
  if not ok then M.warn(err) return end
  M.conv.count(d, true)
  M.conv.save()
  M.say(string.format("(compacted: about %s tokens before, %s now)", chatview.thousands(before), chatview.thousands(M.context_size())))
end

builtin.compact = {
  help = "have the model summarize the conversation and continue from the summary",
  fn = function() M.compact() end,
}

-- shell_note_max bounds the output of a !command kept for the model.
M.shell_note_max = 16 * 1024

-- shell_timeout bounds a !command, in seconds (the shell tool's longest);
-- Ctrl-C stops it sooner.
M.shell_timeout = 1800

-- shell(command) runs a !command through the shell tool as the person's
-- own call (not asked about): what it leaves running in the background is
-- stopped when it ends, Ctrl-C stops it, and its output comes back with
-- the vault's secrets redacted. The result is shown and a note of it goes
-- with the next message to the model. Nothing is sent now.
---@param command string
function M.shell(command)
  if command:match("^%s*$") then M.warn("usage: !COMMAND runs COMMAND in the shell") return end
  M.rl:suspend()
  M.rl:watch_escape(true) -- Esc stops the command, as Ctrl-C does
  -- the output is shown as it comes; the exit status ends it
  local last = "\n"
  local function show(text)
    tai.term.write(chatview.clean(text))
    last = text:sub(-1)
  end
  local r, err = tai.call("shell", { command = command, timeout = M.shell_timeout }, { on_output = show })
  if last ~= "\n" then tai.term.write("\n") end
  if not r then M.warn(err) return end
  local parts = {}
  for _, c in ipairs(r.content or {}) do
    if c.type == "text" then parts[#parts + 1] = c.text end
  end
  local out = table.concat(parts, "\n")
  local record = out:match("^The result is %d+ bytes, over the inline limit of %d+, so it was stored as record (%S+)%.")
  if record then
    local whole = tai.vault.record_get(record, 0, 4096)
    if whole then out = whole end
  end
  -- what the result says besides the output shown already: the status,
  -- stopped background processes, a note on the sandbox
  local status = {}
  for line in (out .. "\n"):gmatch("([^\n]*)\n") do
    if line:match("^%-%-%- std[a-z]+ ") then break end
    status[#status + 1] = line
  end
  while #status > 0 and status[#status] == "" do status[#status] = nil end
  local say = r.isError and M.warn or M.say
  say(chatview.clean(table.concat(status, "\n")))
  local kept = out
  if #kept > M.shell_note_max then kept = kept:sub(1, M.shell_note_max) .. "\n[… " .. (#out - M.shell_note_max) .. " more bytes not kept]" end
  M.conv.notes[#M.conv.notes + 1] = string.format("[The person ran a shell command themselves: `%s`. What it gave:\n%s]", command, kept)
end

-- install_builtins adds the built-in commands unless init.lua already
-- defined commands of those names.
function M.install_builtins()
  require("tai.mcpcommand").install()
  for name, c in pairs(builtin) do
    if not find_command(name) then
      tai.command(name, c.fn, c.help, c.complete)
    end
  end
end

-- distance(a, b) is the edit distance between two words (insertions,
-- deletions, substitutions and swaps of neighbours each count one).
local function distance(a, b)
  local d = {}
  for i = 0, #a do d[i] = { [0] = i } end
  for j = 0, #b do d[0][j] = j end
  for i = 1, #a do
    for j = 1, #b do
      local cost = a:sub(i, i) == b:sub(j, j) and 0 or 1
      d[i][j] = math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
      if i > 1 and j > 1 and a:sub(i, i) == b:sub(j - 1, j - 1) and a:sub(i - 1, i - 1) == b:sub(j, j) then
        d[i][j] = math.min(d[i][j], d[i - 2][j - 2] + 1)
      end
    end
  end
  return d[#a][#b]
end

-- aliases are what other shells name a command tai has under another
-- name.
M.aliases = { q = "quit", h = "help", reset = "clear", models = "model" }

-- nearest_command(name) is the command a mistyped /name most likely
-- meant: an alias, the one command it begins, or the nearest within two
-- edits; nil when none is near.
---@param name string
---@return string|nil
function M.nearest_command(name)
  local low = name:lower()
  if M.aliases[low] and find_command(M.aliases[low]) then return M.aliases[low] end
  local best, best_d, starts = nil, 3, {}
  for _, c in ipairs(tai.commands()) do
    if low ~= "" and c.name:sub(1, #low) == low then starts[#starts + 1] = c.name end
    local dd = distance(low, c.name)
    if dd < best_d then best, best_d = c.name, dd end
  end
  if #starts == 1 then return starts[1] end
  if best and best_d <= math.max(1, math.min(2, #low - 2)) then return best end
  return nil
end

-- command(line) runs a /command line.
---@param line string
function M.command(line)
  local name, rest = line:match("^%s*/([^%s]*)%s*(.-)%s*$")
  local c = find_command(name)
  if not c and prompts.split(name) then
    prompts.run(name, rest, M.prompt_io())
    return
  end
  if not c then
    local near = M.nearest_command(name)
    M.warn("unknown command /" .. name .. (near and ("; did you mean /" .. near .. "? /help lists them") or "; /help lists them"))
    return
  end
  local ok, err = tai.term.protect(c.fn, rest, words(rest))
  if not ok then
    M.warn("/" .. name .. ": " .. tostring(err))
  end
end

-- prompt_io is what a /SERVER:PROMPT command reads and says through.
---@return table
function M.prompt_io()
  return {
    rl = M.rl, say = M.say, warn = M.warn,
    set_complete = function(fn) M.answer_complete = fn end,
    chat = function(messages) M.chat("", messages) end,
  }
end

-- answer_complete, while set, completes the answer to a question (a
-- prompt's argument) in place of commands and paths.
M.answer_complete = nil

-- complete_prompt(line) completes /SERVER:PROMPT commands and, after one,
-- the names of its arguments not given yet; nil when line is neither.
---@param line string
---@return string[]|nil
function M.complete_prompt(line)
  local partial = line:match("^%s*/([^%s]*)$")
  if partial then
    local out = {}
    for _, c in ipairs(prompts.commands()) do
      if c.prompt.offered and c.name:sub(1, #partial) == partial then out[#out + 1] = "/" .. c.name end
    end
    return out
  end
  local name, rest = line:match("^%s*/([^%s:]+:%S+)%s+(.*)$")
  if not name then return nil end
  local p = prompts.find(name)
  local out = {}
  local word = rest:match("(%S*)$")
  -- After ARG=, the values the server completes (completion/complete,
  -- quietly: never a question, bounded in time), the other arguments
  -- given as its context.
  local arg, value = word:match("^([^%s=]+)=(.*)$")
  if p and arg and value:sub(1, 1) ~= '"' and value:sub(1, 1) ~= "'" then
    local known = false
    for _, a in ipairs(p.arguments or {}) do known = known or a.name == arg end
    if not known then return out end
    local chosen = prompts.parse(rest:sub(1, #rest - #word)) or {}
    local ok, vals = pcall(tai.mcp.complete_argument,
      { server = p.server, prompt = p.name, argument = arg, value = value, context = chosen, quiet = true })
    for _, v in ipairs(ok and type(vals) == "table" and vals or {}) do
      if type(v) == "string" and v:sub(1, #value) == value then
        if not v:find("%s") then
          out[#out + 1] = arg .. "=" .. v
        elseif not v:find('"', 1, true) then
          out[#out + 1] = arg .. '="' .. v .. '"'
        end
      end
    end
    return out
  end
  for _, a in ipairs(p and p.arguments or {}) do
    local cand = a.name .. "="
    if not rest:find(cand, 1, true) and cand:sub(1, #word) == word then out[#out + 1] = cand end
  end
  return out
end

-- complete(line) returns whole-word candidates for the last word of line
-- (the text before the cursor).
-- complete_path(word) completes "@dir/na" to the files and folders whose
-- names start so (relative to the working directory).
---@param word string
---@return string[]
function M.complete_path(word)
  local path = word:sub(2)
  local dir, base = path:match("^(.*/)([^/]*)$")
  if not dir then dir, base = "", path end
  local full = dir
  if dir:sub(1, 1) ~= "/" and dir:sub(1, 1) ~= "~" then full = tai.cwd() .. "/" .. dir end
  if dir:sub(1, 1) == "~" then full = (os.getenv("HOME") or "") .. dir:sub(2) end
  local out = {}
  for _, name in ipairs(tai.list_dir(full) or {}) do
    if name:sub(1, #base) == base and (base:sub(1, 1) == "." or name:sub(1, 1) ~= ".") then
      out[#out + 1] = "@" .. dir .. name
    end
  end
  return out
end

---@param line string
---@return string[]
function M.complete(line)
  if M.answer_complete then
    local ok, cands = pcall(M.answer_complete, line)
    return ok and type(cands) == "table" and cands or {}
  end
  local at = line:match("^[^/=!].*(@%S*)$") or line:match("^(@%S*)$")
  if at then
    local out = M.complete_path(at)
    for _, m in ipairs(require("tai.mcpcommand").complete_mention(at)) do out[#out + 1] = m end
    return out
  end
  local partial = line:match("^%s*/([%w_%.%-]*)$")
  if partial then
    local out = {}
    for _, c in ipairs(tai.commands()) do
      if c.name:sub(1, #partial) == partial then out[#out + 1] = "/" .. c.name end
    end
    for _, cand in ipairs(M.complete_prompt(line) or {}) do out[#out + 1] = cand end
    return out
  end
  local pcands = M.complete_prompt(line)
  if pcands then return pcands end
  local name, rest = line:match("^%s*/([%w_%.%-]+)%s+(.*)$")
  if name then
    local c = find_command(name)
    if c and c.complete then
      local word = rest:match("(%S*)$")
      local ok, cands = pcall(c.complete, word, line)
      if ok and type(cands) == "table" then
        local out = {}
        for _, cand in ipairs(cands) do
          if type(cand) == "string" and cand:sub(1, #word) == word then out[#out + 1] = cand end
        end
        return out
      end
    end
  end
  return {}
end

-- credential_patterns match (in the lower-cased line) what looks like a
-- credential: a header, a bearer token, key=value, a --flag with a value,
-- userinfo in a URL, well-known token prefixes.
M.credential_patterns = {
  "authorization", "x%-api%-key", "private%-token", "cookie[\"']?%s*[:=]",
  "token%s*[=:]", "api[_%-]?key%s*[=:]", "secret%s*[=:]", "passw[o]?r?d%s*[=:]", "credential%s*[=:]",
  "%-%-api%-key", "%-%-token", "%-%-password", "%-%-secret",
  "://[^/%s@]+:[^/%s@]*@", "ghp_%w", "gho_%w", "github_pat_", "glpat%-", "xox[abpr]%-", "sk%-%w%w%w%w%w%w%w%w",
}

-- history_ok(line) says whether a line may go into the history file: lines
-- that set secrets or hold something that looks like a credential never do.
---@param line string
---@return boolean
function M.history_ok(line)
  if line:find("secret_set", 1, true) then return false end
  local low = line:lower()
  for _, p in ipairs(M.credential_patterns) do
    local init = 1
    while true do
      local _, e = low:find(p, init)
      if not e then break end
      -- a name followed by a ${REFERENCE} holds no secret, only its name
      local rest = low:sub(e + 1):gsub("^[%s:=\"'%]]*", ""):gsub("^bearer%s+", "")
      if not rest:match("^%${[%w_%-%.:]+}") then return false end
      init = e + 1
    end
  end
  -- "Bearer " and a token (long, with a digit), not the words "bearer tokens"
  for tok in low:gmatch("bearer%s+(%S+)") do
    if #tok >= 8 and tok:find("%d") then return false end
  end
  -- a quoted key that names a credential (tai.vault.credential_name) with
  -- a value written out, as pasted configs hold them ("clientSecret": "…",
  -- "GITHUB_TOKEN": "…"); a ${NAME} reference or an address is no secret
  for key, value in line:gmatch("[\"']([%w_%-%.]+)[\"']%s*[:=]%s*[\"']([^\"']*)[\"']") do
    value = value:lower()
    if value ~= "" and not value:match("^%${[^}]*}$") and not value:match("^https?://[^@]*$")
        and tai.vault.credential_name(key) then
      return false
    end
  end
  return true
end

-- history_note(line) tells the person when a line is kept out of the
-- history for what it holds; it returns whether the line may be kept.
---@param line string
---@return boolean
function M.history_note(line)
  if M.history_ok(line) then return true end
  M.say("(not kept in history: it holds a secret)")
  return false
end

-- remember(line) adds a line to the history, known secret values redacted
-- (the line is left out when the vault cannot be read to redact it).
---@param line string
function M.remember(line)
  if not M.history_note(line) then return end
  local red = tai.vault.redact(line)
  if red then M.rl:add_history(red) end
end

-- handle(line) dispatches one line read at the prompt.
---@param line string
---@return nil
function M.handle(line)
  local s = line:match("^%s*(.-)%s*$")
  if s == "" then return end
  if s:find("\n", 1, true) and (s:match("^//") or s:match("^/%*") or s:match("^#") or s:match("^```")) then
    -- a pasted block that opens with a comment or a code fence (as
    -- READMEs show them) is still a config when its first real line is
    for l in s:gmatch("[^\n]+") do
      local t = l:match("^%s*(.-)%s*$")
      if t ~= "" and not (t:match("^//") or t:match("^/%*") or t:match("^#") or t:match("^```")) then
        local kind = M.block_kind(t)
        if kind then return M.config_block(t, kind, s) end
        break
      end
    end
  end
  if s:sub(1, 1) == "/" then
    M.remember(s)
    return M.command(s)
  end
  if s:sub(1, 1) == "=" then
    M.remember(s)
    return M.eval(s:sub(2))
  end
  if s:sub(1, 1) == "!" then
    M.remember(s)
    return M.shell(s:sub(2))
  end
  local first = s:match("^[^\n]*")
  local kind = M.block_kind(first)
  if kind then
    -- pasted configs often hold tokens: they never go into the history.
    -- A bracketed paste holds the whole block; a line-by-line one (a
    -- terminal without bracketed paste) is read on until it is complete.
    if s:find("\n", 1, true) then return M.config_block(first, kind, s) end
    return M.config_block(line, kind)
  end
  local gh = require("tai.mcpcommand").github(s)
  if gh then
    -- a GitHub repository URL names an MCP server to resolve, not a
    -- message for the model
    M.remember(s)
    return require("tai.mcpcommand").offer_github(s, gh)
  end
  if require("tai.mcpcommand").pasted_server(s) then
    -- a server's address or a claude|codex|gemini mcp add line, which may
    -- hold a token: offered like a config block, kept out of the history
    return require("tai.mcpcommand").offer(s)
  end
  if s:find("\n", 1, true) and M.looks_yaml(s) then M.say(M.data_note) end
  M.remember(s)
  return M.chat(s)
end

-- read_message(prompt) reads one message: a line, or several when the
-- person ends a line with Ctrl-J, Alt-Enter or a trailing backslash (the
-- further lines get the continuation prompt). A bracketed paste arrives
-- whole, newlines included. Returns the text, or nil and "interrupt" or
-- "eof" (Ctrl-C on a further line drops the whole message).
---@param prompt string
---@return string|nil
---@return string|nil
function M.read_message(prompt)
  local line, err = M.rl:read(prompt)
  if not line then return nil, err end
  local parts = {}
  while true do
    local more = err == "more"
    if not more and line:match("\\$") and not line:match("\\\\$") and not line:find("\n", 1, true) then
      line = line:sub(1, -2)
      more = true
    end
    parts[#parts + 1] = line
    if not more then break end
    line, err = M.rl:read(M.continuation)
    if not line then
      if err == "interrupt" then return nil, err end
      break
    end
  end
  return table.concat(parts, "\n")
end

-- run() is the loop: it returns the exit status when the person quits.
---@param inv table
---@return integer
function M.run(inv)
  inv = inv or {}
  M.install_builtins()
  M.rl = tai.term.readline({ history = tai.term.history_file(), complete = M.complete })
  -- A notice said during a turn (a server's warning) never lands at the
  -- end of a tool's line or the spinner: it starts a line of its own.
  if not M.notify_wrapped then
    M.notify_wrapped = true
    local notify = tai.notify
    tai.notify = function(text, level)
      if M.view then M.view.before_notice() end
      return notify(text, level)
    end
  end
  tai.prompter(chatview.prompter(function() return M.rl end, M.say, M.before_prompt))
  -- the prompt shows the current profile, which lives in the vault
  local okp, p = pcall(tai.profiles.current)
  M.conv = chatview.conversation()
  local oks, serr = pcall(M.conv.start)
  if not oks then M.warn(tostring(serr)) end
  M.say(string.format("tai %s. /help lists topics and commands; !cmd runs a shell command,\n@file attaches a file, Alt-Enter starts a new line, Ctrl-D quits.", tai.version))
  local notice = chatview.sandbox_notice()
  if notice then M.warn("(" .. notice .. ")") end
  local shell_off = okp and M.shell_sandbox_warning(p)
  if shell_off then M.warn(shell_off) end
  local env_key = chatview.env_key()
  if okp and p and p.provider == "ollama" and p.name == "ollama" and not env_key then
    M.say("(no OPENAI_API_KEY or ANTHROPIC_API_KEY is set: the model is a local Ollama\nat 127.0.0.1:11434; /profile new adds another)")
  elseif okp and p and env_key and p.name ~= "default" then
    M.say("(profile " .. p.name .. " is in use, not the " .. env_key .. " in the environment; /profile use default switches to that)")
  end
  if inv.continue then
    local c, err = M.conv.latest()
    if c then
      local ok, rerr = M.conv.resume(c)
      if ok then
        M.say(string.format("(continuing %s: %s, %d turn%s)", c.id, chatview.short(c.title, 60), c.turns, c.turns == 1 and "" or "s"))
        M.show_last(c.messages)
      else
        M.warn("the last conversation cannot be continued: " .. tostring(rerr))
      end
    elseif err then
      M.warn(tostring(err))
    else
      M.say("(no earlier conversation in this folder; /resume lists the others)")
    end
  end
  while not M.done do
    local okp, prompt = pcall(M.prompt)
    if not okp then prompt = "tai> " end
    local line, err = M.read_message(prompt)
    if not line then
      if err == "eof" then break end
      if err ~= "interrupt" then M.warn(err) break end
    else
      local ok, herr = tai.term.protect(M.handle, line)
      M.rl:watch_escape(false)
      if M.view then
        -- a turn stopped by Ctrl-C: clear its spinner, end its line
        M.view.finish()
        M.view = nil
      end
      if not ok then M.warn(tostring(herr)) end
    end
  end
  tai.prompter(nil)
  M.rl:close()
  return 0
end

return M
