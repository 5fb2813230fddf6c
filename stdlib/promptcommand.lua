-- promptcommand.lua (tai.promptcommand): the REPL's /SERVER:PROMPT
-- commands, one per prompt of an MCP server enabled for the profile
-- (tai.mcp.prompts). repl.lua runs them; a user's own
-- lua/tai/promptcommand.lua replaces it.
--   local pc = require("tai.promptcommand")
--   pc.commands()                  -- {{name="srv:p", help=…}, …}
--   pc.run("srv:p", "a=1 b='x y'", io)
local tai = require("tai")
local chatview = require("tai.chatview")

local M = {}

-- preview_lines and preview_bytes bound what is shown of each message of
-- a rendered prompt before it is sent (the rest folded).
M.preview_lines = 12
M.preview_bytes = 2000

-- split(name) is the server and prompt of "server:prompt", or nil.
---@param name string
---@return string|nil server
---@return string|nil prompt
function M.split(name)
  return name:match("^([^:%s]+):(%S+)$")
end

-- parse(text) reads name=value arguments; a value may be quoted with " or
-- '. Returns the table, or nil and what was wrong.
---@param text string
---@return table<string, string>|nil
---@return string|nil
function M.parse(text)
  local args, i = {}, 1
  while true do
    i = text:match("^%s*()", i)
    if i > #text then return args end
    local name, after = text:match("^([^%s=]+)=()", i)
    if not name then
      return nil, "give arguments as name=value (name=\"two words\" when the value has spaces), not " .. chatview.clean(text:match("^%S*", i))
    end
    i = after
    local q = text:sub(i, i)
    if q == '"' or q == "'" then
      local close = text:find(q, i + 1, true)
      if not close then return nil, "the value of " .. chatview.clean(name) .. " has no closing " .. q end
      args[name] = text:sub(i + 1, close - 1)
      i = close + 1
    else
      local value, e = text:match("^(%S*)()", i)
      args[name], i = value, e
    end
  end
end

-- prompts() lists the prompts of the servers enabled for the profile
-- ({} when tai.mcp cannot say).
---@return table[]
function M.prompts()
  local ok, list = pcall(tai.mcp.prompts)
  if not ok or type(list) ~= "table" then return {} end
  return list
end

-- commands() are the prompts as /help lists commands: name "server:prompt",
-- help its title and description (or why it is withheld).
---@return table[]
function M.commands()
  local out = {}
  for _, p in ipairs(M.prompts()) do
    local help = p.description or ""
    if p.title and p.title ~= "" then help = p.title .. (help ~= "" and (": " .. help) or "") end
    if not p.offered then help = "(" .. (p.reason or p.state) .. ")" end
    out[#out + 1] = { name = p.server .. ":" .. p.name, help = help, server = p.server, prompt = p }
  end
  return out
end

-- help_lines(server, cmds, width, help_lines) is /help's section for one
-- server's prompts (commands() of that server): the offered ones by
-- help_lines, those withheld folded into one line with the command that
-- grants them, and a note when the server may list more than tai offers
-- (tai.mcp.MAX_PROMPTS, the first by name).
---@param server string
---@param cmds table[]
---@param width integer
---@param help_lines fun(cmds: table[], width: integer): string[]
---@return string[]
function M.help_lines(server, cmds, width, help_lines)
  local offered, withheld = {}, {}
  for _, c in ipairs(cmds) do
    if c.prompt.offered then offered[#offered + 1] = c else withheld[#withheld + 1] = c end
  end
  local lines = help_lines(offered, width)
  if #withheld > 0 then
    local names = {}
    for i, c in ipairs(withheld) do
      if i > 3 then names[#names + 1] = string.format("and %d more", #withheld - 3) break end
      names[#names + 1] = chatview.clean(c.prompt.name)
    end
    lines[#lines + 1] = "  " .. chatview.short(string.format("%d withheld until you grant them (%s): /mcp grant %s",
      #withheld, table.concat(names, ", "), chatview.clean(server)), width - 2)
  end
  if tai.mcp.MAX_PROMPTS and #cmds >= tai.mcp.MAX_PROMPTS then
    lines[#lines + 1] = "  " .. chatview.short(string.format("(tai offers a server's first %d prompts by name; any more it lists are not offered)",
      tai.mcp.MAX_PROMPTS), width - 2)
  end
  return lines
end

-- find(name) is the prompt /name runs, or nil and why not.
---@param name string
---@return table|nil
---@return string|nil
function M.find(name)
  local server, prompt = M.split(name)
  if not server then return nil, "/" .. chatview.clean(name) .. " names no prompt: /SERVER:PROMPT runs one" end
  local list = tai.mcp.prompts({ server = server })
  if not list then return nil, "no MCP server " .. chatview.clean(server) .. " is registered: /mcp lists them, /help lists the prompts" end
  for _, p in ipairs(list) do
    if p.name == prompt then return p end
  end
  local cut = ""
  if tai.mcp.MAX_PROMPTS and #list >= tai.mcp.MAX_PROMPTS then
    cut = string.format(" (tai offers its first %d by name)", tai.mcp.MAX_PROMPTS)
  end
  return nil, "mcp server " .. chatview.clean(server) .. " offers no prompt " .. chatview.clean(prompt) .. " for this profile" .. cut .. "; /help lists the prompts"
end

-- describe(p) is /help's text for a prompt: the command, its description
-- and one line per argument.
---@param p table
---@return string[]
function M.describe(p)
  local lines = { "/" .. p.server .. ":" .. p.name .. "  " .. chatview.clean(p.title or p.description or "") }
  if p.title and p.title ~= "" and p.description and p.description ~= "" then lines[#lines + 1] = "  " .. chatview.clean(p.description) end
  if not p.offered then lines[#lines + 1] = "  " .. chatview.clean(p.reason or p.state) end
  for _, a in ipairs(p.arguments or {}) do
    lines[#lines + 1] = string.format("  %s=%s%s", chatview.clean(a.name), a.required and "(required)" or "(optional)",
      a.description and a.description ~= "" and ("  " .. chatview.clean(a.description)) or "")
  end
  return lines
end

-- completer(p, chosen) completes a value of argument arg of p as typed so
-- far, through completion/complete ({} when the server offers none).
local function completer(p, arg, chosen)
  return function(line)
    local vals = tai.mcp.complete_argument({ server = p.server, prompt = p.name, argument = arg, value = line, context = chosen })
    local out = {}
    for _, v in ipairs(vals or {}) do
      if v:sub(1, #line) == line then out[#out + 1] = v end
    end
    return out
  end
end

-- ask(p, args, io) asks each required argument args lacks, one by one,
-- with completion on Tab. Returns false when the person cancelled (Esc,
-- Ctrl-C, or an empty answer).
local function ask(p, args, io)
  for _, a in ipairs(p.arguments or {}) do
    if a.required and (args[a.name] == nil or args[a.name] == "") then
      local hint = a.description and a.description ~= "" and (" (" .. chatview.short(chatview.clean(a.description), 60) .. ")") or ""
      io.set_complete(completer(p, a.name, args))
      local line, err = io.rl:read("  " .. chatview.clean(a.name) .. hint .. ": ", { escape = true })
      io.set_complete(nil)
      if not line then
        io.say("(cancelled; nothing sent)")
        return false, err
      end
      line = line:match("^%s*(.-)%s*$")
      if line == "" then
        io.say("(cancelled: " .. chatview.clean(a.name) .. " is required; nothing sent)")
        return false
      end
      args[a.name] = line
    end
  end
  return true
end

-- preview(turn, io) shows each message of a rendered prompt, folded.
local function preview(turn, io)
  io.say(string.format("prompt %s:%s, %d message%s:", chatview.clean(turn.server), chatview.clean(turn.name), #turn.messages, #turn.messages == 1 and "" or "s"))
  for _, m in ipairs(turn.messages) do
    local shown, note = chatview.fold(m.content or "", false, M.preview_lines, M.preview_bytes)
    local first = true
    for line in (shown .. "\n"):gmatch("([^\n]*)\n") do
      io.say((first and ("  " .. m.role .. ": ") or "    ") .. line)
      first = false
    end
    if note and note ~= "" then io.say("    (" .. note .. ")") end
  end
end

-- confirm(io) asks whether to send: Enter sends, Esc or any other key
-- cancels; without a terminal a line is read, and an empty one sends.
local function confirm(io)
  local key, err = io.rl:key("  Enter sends it, Esc cancels ")
  if err == "not a terminal" then
    key = io.rl:read("  send it? (Enter sends, anything else cancels) ")
    io.say("")
    return key == ""
  end
  io.say("")
  return key == "enter"
end

-- run(name, rest, io) runs /name rest: the prompt's arguments from rest,
-- the required ones missing asked, then the rendered messages shown and,
-- when the person sends them, one turn. io holds rl, say(text),
-- warn(text), set_complete(fn|nil) and chat(messages).
---@param name string
---@param rest string
---@param io table
function M.run(name, rest, io)
  local p, err = M.find(name)
  if not p then io.warn(err) return end
  if not p.offered then io.warn("/" .. chatview.clean(name) .. ": " .. chatview.clean(p.reason or p.state)) return end
  local args, perr = M.parse(rest)
  if not args then io.warn("/" .. chatview.clean(name) .. ": " .. perr) return end
  local known = {}
  for _, a in ipairs(p.arguments or {}) do known[a.name] = true end
  for k in pairs(args) do
    if not known[k] then
      local names = {}
      for _, a in ipairs(p.arguments or {}) do names[#names + 1] = a.name end
      io.warn(string.format("/%s takes no argument %s (it takes: %s)", chatview.clean(name), chatview.clean(k),
        #names > 0 and chatview.clean(table.concat(names, ", ")) or "none"))
      return
    end
  end
  if not ask(p, args, io) then return end
  local turn, gerr = tai.mcp.prompt({ server = p.server, name = p.name, args = args })
  if not turn then io.warn("/" .. chatview.clean(name) .. ": " .. chatview.clean(gerr)) return end
  if #turn.messages == 0 then io.warn("/" .. chatview.clean(name) .. ": the server rendered no message; nothing sent") return end
  preview(turn, io)
  if not confirm(io) then
    io.say("(not sent)")
    return
  end
  io.chat(turn.messages)
end

return M
