-- mcpview.lua: how the REPL shows MCP server entries to the person who
-- must judge them: name, transport, the exact argv or URL, the names (never
-- the values) of env variables and headers, tool lists, and the notes the
-- normalizer made. Every word of a command line, every name and the URL
-- is on lines of its own, with line breaks, escapes and invisible
-- characters shown (\n, \x1b, \u200b: tai.term.words). A user's own
-- lua/tai/mcpview.lua replaces it.
--
--   local view = require("tai.mcpview")
--   for _, line in ipairs(view.lines(entries, notes)) do print(line) end
--   view.entry(e)   -> { line, … }   one entry
--   view.argv(e)    -> "npx -y '@scope/pkg'"  the command line, shell-quoted
--   view.url(u)     -> the URL with userinfo and query values hidden
--   view.reference(v) -> "Bearer ${TOKEN}" for a value naming variables, else nil
--   view.sandbox(e) -> "  sandbox: also reads ~/notes; network closed", or nil
local tai = require("tai")

local M = {}

local function sorted_keys(t)
  local out = {}
  for k in pairs(t or {}) do out[#out + 1] = tostring(k) end
  table.sort(out)
  return out
end

-- quote(word) quotes a word as a POSIX shell needs it to read it back as one.
---@param word any
---@return string
function M.quote(word)
  word = tostring(word)
  if word ~= "" and not word:find("[^%w@%%+=:,./_%-]") then return word end
  return "'" .. word:gsub("'", [['\'']]) .. "'"
end

-- argv(e) is the command line of a stdio entry, each word shell-quoted.
---@param e table
---@return string
function M.argv(e)
  local words = { M.quote(e.command or "") }
  for _, a in ipairs(e.args or {}) do words[#words + 1] = M.quote(a) end
  return table.concat(words, " ")
end

-- url(u) hides what a URL may carry as a credential: the userinfo and
-- every query value (names stay, so the person sees what is sent).
---@param u any
---@return string
function M.url(u)
  if type(u) ~= "string" then return "" end
  u = u:gsub("^(%a[%w+.-]*://)[^/@?#]*@", "%1…@")
  local base, query, frag = u:match("^([^?#]*)%?([^#]*)(.*)$")
  if not base then return u end
  local parts = {}
  for pair in query:gmatch("[^&]+") do
    local k, v = pair:match("^([^=]*)=(.*)$")
    if not k then
      parts[#parts + 1] = pair
    else
      parts[#parts + 1] = k .. "=" .. (M.reference(v) or "…")
    end
  end
  return base .. "?" .. table.concat(parts, "&") .. frag
end

-- reference(v) shows a value only as far as it names variables: each
-- ${…} reference as written (it names a secret, it is not one), and the
-- text around them as "…" unless it is a scheme word such as "Bearer ".
-- A value with no reference gives nil: it stays hidden.
---@param v any
---@return string|nil
function M.reference(v)
  if type(v) ~= "string" or not v:find("${", 1, true) then return nil end
  local out, i = {}, 1
  while i <= #v do
    local s, e = v:find("%${[^{}]*}", i)
    if not s then s = #v + 1 end
    if s > i then
      local lit = v:sub(i, s - 1)
      if lit:match("^%a+ $") or lit:match("^[%p%s]?$") then out[#out + 1] = lit else out[#out + 1] = "…" end
    end
    if s > #v then break end
    out[#out + 1] = v:sub(s, e)
    i = e + 1
  end
  return table.concat(out)
end

-- label is the width of the labels before the words an entry shows.
local label = "  headers: "

-- field(out, name, words [, after]) adds the lines that show words under
-- name ("runs", "env"): each word on lines of its own, rendered visibly
-- and folded, never cut (tai.term.words); after(i) is text to put after
-- the i-th word.
local function field(out, name, words, after)
  local pad = "  " .. name .. ":" .. string.rep(" ", #label - #name - 3)
  local width = tai.term.width() - #label
  for i, w in ipairs(words) do
    local lines = tai.term.words({ w }, width)
    if after then lines[#lines] = lines[#lines] .. after(i) end
    for _, l in ipairs(lines) do
      out[#out + 1] = pad .. l
      pad = string.rep(" ", #label)
    end
  end
end

-- names(out, name, t) shows t's keys under name, with =${REF} for values
-- that reference variables; other values are hidden.
local function names(out, name, t)
  local keys = sorted_keys(t)
  field(out, name, keys, function(i)
    local r = M.reference(t[keys[i]])
    local s = r and ("=" .. tai.term.clean(r, true)) or ""
    if i == #keys then s = s .. "  (values hidden)" end
    return s
  end)
end

-- state(e) says whether the entry comes enabled: in interactive mode the
-- person chooses when adding it; under --auto and --yolo the entry says.
local function state(e)
  if tai.mode == "interactive" then return "you choose to enable it when adding" end
  if e.enabled then return "enabled when added" end
  return "disabled until /mcp enable"
end

-- referenced(t) says whether a value of t references a variable.
local function referenced(t)
  for _, v in pairs(t or {}) do
    if M.reference(v) then return true end
  end
  return false
end

-- entry(e [, notes [, brief]]) returns the lines that show one entry, then
-- its notes. brief leaves out what the consent screen that follows shows
-- in full (the command and its arguments or the URL, the folder, env and
-- header names), keeping the env and headers that reference variables.
---@param e table
---@param notes? table[]
---@param brief? boolean
---@return string[]
function M.entry(e, notes, brief)
  local one = function(s) return tai.term.clean(tostring(s), true) end
  local out = {}
  out[#out + 1] = string.format("%s  (%s, %s, from %s)", one(e.name or "?"), one(e.transport or "?"), state(e), one(e.source or "paste"))
  if brief then
    -- the consent screen shows them
  elseif e.transport == "http" then
    field(out, "url", { M.url(e.url) })
  else
    local words = { e.command or "" }
    for _, a in ipairs(e.args or {}) do words[#words + 1] = a end
    field(out, "runs", words)
    if e.cwd and e.cwd ~= "" then field(out, "in", { e.cwd }) end
  end
  if next(e.env or {}) and (not brief or referenced(e.env)) then names(out, "env", e.env) end
  if next(e.headers or {}) and (not brief or referenced(e.headers)) then names(out, "headers", e.headers) end
  local sb = M.sandbox(e)
  if sb then out[#out + 1] = sb end
  if e.allow and #e.allow > 0 then out[#out + 1] = "  tools:   only " .. one(table.concat(e.allow, ", ")) end
  if e.deny and #e.deny > 0 then out[#out + 1] = "  never:   " .. one(table.concat(e.deny, ", ")) end
  for _, n in ipairs(notes or {}) do
    out[#out + 1] = string.format("  %-7s  %s", n.level, one(n.text))
  end
  return out
end

-- sandbox(e) is the line that shows what a stdio entry says about its
-- sandbox (nil when it says nothing: the default): a warning when it turns
-- the sandbox off, else what it grants, closes and requires.
---@param e table
---@return string|nil
function M.sandbox(e)
  local sb = e.sandbox
  if e.transport == "http" or sb == nil or sb == true then return nil end
  if sb == false then
    return "  ⚠ sandbox: off (sandbox = false): the server runs with all of your rights, your keys and the vault's folder included"
  end
  if sb == "required" then return "  sandbox: required (the server does not start where no sandbox can run)" end
  if type(sb) ~= "table" then return nil end
  local parts = {}
  local function paths(list)
    local shown = {}
    for _, p in ipairs(list) do shown[#shown + 1] = tai.term.clean(tostring(p), true) end
    return table.concat(shown, ", ")
  end
  if sb.read and #sb.read > 0 then parts[#parts + 1] = "also reads " .. paths(sb.read) end
  if sb.write and #sb.write > 0 then parts[#parts + 1] = "also writes " .. paths(sb.write) end
  if sb.network == false then parts[#parts + 1] = "network closed" end
  if sb.required then parts[#parts + 1] = "required" end
  if #parts == 0 then return nil end
  return "  sandbox: " .. table.concat(parts, "; ")
end

-- lines(entries, notes [, brief]) shows a whole paste: notes on the text
-- as a whole, each entry with its own notes (brief: see entry), then each
-- refused entry and why.
---@param entries table[]
---@param notes? table[]
---@param brief? boolean
---@return string[]
function M.lines(entries, notes, brief)
  local out = {}
  local by_server, general, refused = {}, {}, {}
  local known = {}
  for _, e in ipairs(entries or {}) do known[e.name or ""] = true end
  for _, n in ipairs(notes or {}) do
    local s = n.server or ""
    if s == "" then
      general[#general + 1] = n
    elseif n.level == "refused" and not known[s] then
      refused[#refused + 1] = n
    else
      by_server[s] = by_server[s] or {}
      table.insert(by_server[s], n)
    end
  end
  local one = function(v) return tai.term.clean(tostring(v), true) end
  for _, n in ipairs(general) do out[#out + 1] = string.format("%-7s  %s", n.level, one(n.text)) end
  for _, e in ipairs(entries or {}) do
    if #out > 0 then out[#out + 1] = "" end
    for _, l in ipairs(M.entry(e, by_server[e.name or ""], brief)) do out[#out + 1] = l end
  end
  -- notes about a server that has no entry and was not refused (a name
  -- given to something the rules could not use)
  for s, list in pairs(by_server) do
    if not known[s] then
      for _, n in ipairs(list) do refused[#refused + 1] = n end
    end
  end
  if #refused > 0 and #out > 0 then out[#out + 1] = "" end
  for _, n in ipairs(refused) do
    out[#out + 1] = string.format("%s  %s: %s", n.level == "refused" and "refused" or n.level, one(n.server), one(n.text))
  end
  return out
end

-- summary(entries, notes [, what]) is one line: how many entries, how many
-- refused, how many warnings what holds ("the paste" when not given; a
-- file's path for /mcp add FILE).
---@param entries table[]
---@param notes? table[]
---@param what? string
---@return string
function M.summary(entries, notes, what)
  local refused, warns = 0, 0
  for _, n in ipairs(notes or {}) do
    if n.level == "refused" then refused = refused + 1 elseif n.level == "warn" then warns = warns + 1 end
  end
  local parts = { string.format("%d server%s", #(entries or {}), #(entries or {}) == 1 and "" or "s") }
  if refused > 0 then parts[#parts + 1] = refused .. " refused" end
  if warns > 0 then parts[#parts + 1] = warns .. " warning" .. (warns == 1 and "" or "s") .. " to read" end
  return (what or "the paste") .. " holds " .. table.concat(parts, ", ")
end

return M
