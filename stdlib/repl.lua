-- repl.lua: the interactive loop. Everything here may be replaced by a
-- user's own lua/repl.lua, or wrapped from init.lua:
--   local repl = require("repl")
--   repl.prompt = function() return os.date("%H:%M") .. " tai> " end
--   repl.chat = function(text) ... end   -- what plain text does
local tai = require("tai")
local inspect = require("inspect")
local chatview = require("chat")

local M = {}

-- prompt() -> string shown before each line: the profile, and the
-- approval mode when tools run without asking ("tai:default [auto]> ").
function M.prompt()
  local mode = ""
  if tai.mode ~= "interactive" then mode = " [" .. tai.mode .. "]" end
  return M.paint("1;36", "tai:" .. tai.profile) .. mode .. "> "
end

-- continuation is the prompt for the further lines of a message or block.
M.continuation = "... "

-- paint(code, text) wraps text in an ANSI colour when colour is on.
function M.paint(code, text)
  if tai.term.color() then
    return "\27[" .. code .. "m" .. text .. "\27[0m"
  end
  return text
end

function M.say(text)
  print(text)
end

function M.warn(text)
  tai.term.warn(M.paint("31", text))
end

-- view is the display of the running turn (nil between turns).
M.view = nil

-- chat(text) handles a line that is neither a command, an expression nor a
-- config block: one agent turn on the current profile, the answer streamed,
-- tool calls shown as they happen. Known secrets are redacted from the
-- message and the answer. Ctrl-C cancels the turn. A turn that ended at
-- the step limit or was cut off at the output limit says so.
function M.chat(text)
  local tty = tai.term.isatty()
  M.view = chatview.new({ write = tai.term.write, note = tai.term.write, spinner = tty,
    redactor = tai.vault.redactor() })
  local answer, d = tai.chat(chatview.redacted(text), M.view.opts())
  M.view.finish()
  M.view = nil
  if not answer then
    if d == "interrupted" then
      M.say("(turn cancelled)")
    else
      M.warn(chatview.clean(chatview.redacted(tostring(d))))
    end
    return
  end
  for _, n in ipairs(chatview.notices(d)) do M.warn("(" .. n .. ")") end
end

-- before_prompt() ends the partly written line of a running turn before a
-- consent screen or a question.
function M.before_prompt()
  if M.view then M.view.newline() end
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

-- lua_block() reads a multi-line chunk ended by a line holding only "."
-- and runs it.
function M.lua_block()
  local lines = {}
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

local balance

-- block_kind(line) says whether a line starts a pasted config block:
-- "json", "json-fragment" ("name": {…} without the outer braces), "toml",
-- or nil (chat). A line that is complete by itself counts only when it
-- parses; an opening line only when it opens the way configs do (a lone
-- brace, or a brace and a quoted key); a TOML key = value line only when
-- the key is one an MCP config starts with.
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

-- balance() returns a scanner that, fed line after line, says when the
-- braces and brackets outside strings have closed.
function balance()
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

local server_keys = { "mcpServers", "servers", "mcp_servers", "context_servers", "mcp" }

local function keys_of(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = tostring(k) end
  table.sort(keys)
  return keys
end

-- describe(value) -> one line saying what a parsed config holds.
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

-- config_block(first, kind [, whole]) reads the rest of a pasted block
-- (or takes the whole paste, when given) and hands it to mcp.offer.
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
  -- The normalizer parses it (JSONC, TOML, fragments) and says what is
  -- wrong and where; mcp.offer shows each server before asking to add.
  require("mcp").offer(table.concat(lines, "\n"))
end

-- Commands -----------------------------------------------------------------

M.done = false

local builtin = {}

builtin.help = {
  help = "list commands, or show one: /help [command]",
  fn = function(rest)
    local name = rest:match("^%s*/?(%S+)")
    if name then
      local c = find_command(name)
      if not c then M.warn("no command /" .. name .. "; /help lists them") return end
      M.say("/" .. c.name .. "  " .. c.help)
      return
    end
    M.say("Commands:")
    local width = 0
    local list = tai.commands()
    for _, c in ipairs(list) do width = math.max(width, #c.name) end
    for _, c in ipairs(list) do
      M.say(string.format("  /%-" .. width .. "s  %s", c.name, c.help))
    end
    M.say("")
    M.say("  plain text    one turn with the model of the current profile (/profile)")
    M.say("  = expr        evaluate Lua and print the result (tables pretty-printed)")
    M.say("  paste a JSON or TOML MCP config: it is read whole (JSON until the braces")
    M.say("                balance, TOML until a blank line) and checked")
    M.say("  Tab completes commands and their arguments; Ctrl-C cancels the line or the")
    M.say("  running command; Ctrl-D quits. History: " .. tai.term.history_file())
  end,
  complete = function(word)
    local out = {}
    for _, c in ipairs(tai.commands()) do out[#out + 1] = c.name end
    return out
  end,
}

builtin.quit = {
  help = "leave tai (Ctrl-D does the same)",
  fn = function() M.done = true end,
}

builtin.lua = {
  help = "run a multi-line Lua chunk, ended by a line holding only .",
  fn = function() M.lua_block() end,
}

-- Profiles -------------------------------------------------------------------

local profile_fields = { "provider", "model", "base_url", "key_env", "key_secret", "system", "max_tokens", "tools" }

-- describe_profile(p) -> lines showing a profile; keys are named by where
-- they live, never shown.
function M.describe_profile(p)
  local lines = { p.name .. (p.current and "  (current)" or "") }
  for _, k in ipairs(profile_fields) do
    local v = p[k]
    if v ~= nil and v ~= "" then
      if type(v) == "table" then v = table.concat(v, ", ") end
      lines[#lines + 1] = string.format("  %-10s %s", k, tostring(v))
    end
  end
  return table.concat(lines, "\n")
end

-- parse_fields(text) reads key=value pairs; a value may be "double quoted"
-- to hold blanks.
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

local function profile_names()
  local out = {}
  local list = tai.profiles.list()
  for _, p in ipairs(list or {}) do out[#out + 1] = p.name end
  return out
end

builtin.profile = {
  help = "show the current profile; /profile use NAME switches; /profile new NAME provider=… model=… [base_url=… key_env=…|key_secret=… system=\"…\"] creates one",
  fn = function(rest, w)
    local sub = w[1]
    if not sub then
      local p, err = tai.profiles.current()
      if not p then M.warn(err) return end
      p.current = true
      M.say(M.describe_profile(p))
      return
    end
    if sub == "use" then
      if not w[2] then M.warn("usage: /profile use NAME (/profiles lists them)") return end
      local p, err = tai.profiles.use(w[2])
      if not p then M.warn(err) return end
      M.say("now using profile " .. p.name .. " (" .. p.provider .. (p.model and p.model ~= "" and (", " .. p.model) or "") .. ")")
      return
    end
    if sub == "new" then
      local name = w[2]
      if not name or name:find("=", 1, true) then
        M.warn("usage: /profile new NAME provider=openai|anthropic|ollama model=… [base_url=…] [key_env=VAR | key_secret=NAME] [system=\"…\"]")
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
      return
    end
    if sub == "show" and w[2] then
      local p, err = tai.profiles.get(w[2])
      if not p then M.warn(err) return end
      M.say(M.describe_profile(p))
      return
    end
    M.warn("unknown /profile subcommand " .. sub .. "; use /profile, /profile use NAME, /profile show NAME or /profile new NAME …")
  end,
  complete = function(word, line)
    local rest = line:match("^%s*/profile%s+(.*)$") or ""
    if not rest:find("%s") then return { "use", "new", "show" } end
    if rest:match("^use%s+%S*$") or rest:match("^show%s+%S*$") then return profile_names() end
    if rest:match("^new%s+%S+%s") then
      local out = {}
      for _, k in ipairs(profile_fields) do out[#out + 1] = k .. "=" end
      return out
    end
    return {}
  end,
}

builtin.profiles = {
  help = "list the model profiles (* marks the current one)",
  fn = function()
    local list, err = tai.profiles.list()
    if not list then M.warn(err) return end
    for _, p in ipairs(list) do
      M.say(string.format("%s %-16s %-9s %s", p.current and "*" or " ", p.name, p.provider, p.model or ""))
    end
  end,
}

builtin.new = {
  help = "start a new conversation (forget the current one)",
  fn = function()
    tai.chat_reset()
    M.say("(new conversation)")
  end,
}

-- install_builtins adds the built-in commands unless init.lua already
-- defined commands of those names.
function M.install_builtins()
  require("mcp").install()
  for name, c in pairs(builtin) do
    if not find_command(name) then
      tai.command(name, c.fn, c.help, c.complete)
    end
  end
end

-- command(line) runs a /command line.
function M.command(line)
  local name, rest = line:match("^%s*/([^%s]*)%s*(.-)%s*$")
  local c = find_command(name)
  if not c then
    M.warn("unknown command /" .. name .. "; /help lists them")
    return
  end
  local ok, err = tai.term.protect(c.fn, rest, words(rest))
  if not ok then
    M.warn("/" .. name .. ": " .. tostring(err))
  end
end

-- complete(line) returns whole-word candidates for the last word of line
-- (the text before the cursor).
function M.complete(line)
  local partial = line:match("^%s*/([%w_%.%-]*)$")
  if partial then
    local out = {}
    for _, c in ipairs(tai.commands()) do
      if c.name:sub(1, #partial) == partial then out[#out + 1] = "/" .. c.name end
    end
    return out
  end
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

-- history_ok(line) says whether a line may go into the history file: lines
-- that set secrets never do.
function M.history_ok(line)
  return not line:find("secret_set", 1, true)
end

-- remember(line) adds a line to the history, known secret values redacted
-- (the line is left out when the vault cannot be read to redact it).
function M.remember(line)
  if not M.history_ok(line) then return end
  local red = tai.vault.redact(line)
  if red then M.rl:add_history(red) end
end

-- handle(line) dispatches one line read at the prompt.
function M.handle(line)
  local s = line:match("^%s*(.-)%s*$")
  if s == "" then return end
  if s:sub(1, 1) == "/" then
    M.remember(s)
    return M.command(s)
  end
  if s:sub(1, 1) == "=" then
    M.remember(s)
    return M.eval(s:sub(2))
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
  M.remember(s)
  return M.chat(s)
end

-- read_message(prompt) reads one message: a line, or several when the
-- person ends a line with Ctrl-J, Alt-Enter or a trailing backslash (the
-- further lines get the continuation prompt). A bracketed paste arrives
-- whole, newlines included. Returns the text, or nil and "interrupt" or
-- "eof" (Ctrl-C on a further line drops the whole message).
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
function M.run()
  M.install_builtins()
  M.rl = tai.term.readline({ history = tai.term.history_file(), complete = M.complete })
  tai.prompter(chatview.prompter(function() return M.rl end, M.say, M.before_prompt))
  -- the prompt shows the current profile, which lives in the vault
  pcall(tai.profiles.current)
  M.say(string.format("tai %s. /help lists commands; Ctrl-D quits.", tai.version))
  while not M.done do
    local okp, prompt = pcall(M.prompt)
    if not okp then prompt = "tai> " end
    local line, err = M.read_message(prompt)
    if not line then
      if err == "eof" then break end
      if err ~= "interrupt" then M.warn(err) break end
    else
      local ok, herr = tai.term.protect(M.handle, line)
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
