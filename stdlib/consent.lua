-- consent.lua: the MCP consent screen. The bridge hands over the facts
-- (tai.ConsentScreen: which server, what will run or be reached, the
-- folders, the variables, what to be warned of), every secret redacted;
-- this module lays them out and words the question. An init.lua may
-- replace M.screen (or lua/consent.lua the module) to lay them out
-- otherwise.

local tai = require("tai")

local M = {}

-- label is the width of the labels before the words ("  headers: ").
local label = 11
-- width is the columns a line of words is folded at: tai.term.words'
-- own width, which the sandbox's line and the instructions follow.
local width = 68

local function line(s) return tai.term.clean(s or "", true) end

-- runes counts the characters of s (UTF-8).
local function runes(s)
  local _, n = s:gsub("[^\128-\191]", "")
  return n
end

-- wrap breaks text at spaces into lines of at most width characters (a
-- word longer than that keeps a line of its own).
local function wrap(text)
  local out, cur = {}, nil
  for w in (text .. " "):gmatch("(.-) ") do
    if cur == nil or cur == "" then
      cur = w
    elseif runes(cur) + 1 + runes(w) > width then
      out[#out + 1] = cur
      cur = w
    else
      cur = cur .. " " .. w
    end
  end
  out[#out + 1] = cur or ""
  return out
end

-- labelled writes lines under name's label, the further ones indented.
local function labelled(out, name, lines)
  local pad = "  " .. name .. ":" .. string.rep(" ", label - #name - 3)
  for _, l in ipairs(lines) do
    out[#out + 1] = pad .. l .. "\n"
    pad = string.rep(" ", label)
  end
end

-- show writes each word on lines of its own (tai.term.words: quoted,
-- rendered visibly, folded, never cut), suffix(i) after word i.
local function show(out, name, words, suffix)
  local lines = {}
  for i, w in ipairs(words) do
    local ls = tai.term.words({ w })
    if suffix then ls[#ls] = ls[#ls] .. suffix(i) end
    for _, l in ipairs(ls) do lines[#lines + 1] = l end
  end
  labelled(out, name, lines)
end

-- from is " (from ${A})" for a variable built from references.
local function from(v)
  if v.from and v.from ~= "" then return " (from " .. line(v.from) .. ")" end
  return ""
end

local function verb(list, one, more)
  if #list > 1 then return more end
  return one
end

---Where a secret the entry passes lands, who can read it there, and what
---to write instead.
---@param x tai.ConsentExposure
---@return string
function M.exposure(x)
  local ref = line("${" .. x.name .. "}")
  if x.shell and x.shell ~= "" then
    local shell = line(x.shell)
    return string.format("%s (%s) is in env %s, which the shell script in the command line reads: a command the script runs with $%s among its arguments shows it to every user of this machine in the process list (ps); let the program read %s from its environment itself, or run it without a shell",
      ref, x.kind, shell, shell, shell)
  end
  if x.query then
    return string.format("%s (%s) goes into the URL's query, which web servers and proxies write to their logs; send it in a header instead if the server takes one: \"headers\": {\"Authorization\": \"Bearer %s\"}",
      ref, x.kind, ref)
  end
  return string.format("%s (%s) goes on the command line, where every user of this machine can read it in the process list (ps); pass it in env instead, under the name the server reads: \"env\": {\"%s\": \"%s\"}, and take it out of args",
    ref, x.kind, line(x.env_name), ref)
end

-- sandbox writes what the sandbox lets a stdio server do, folded under
-- its label, or a warning when it runs with all of the person's rights;
-- then what the policy left out.
local function sandbox(out, c)
  if not c or c.line == "" then return end
  if c.loose and c.off then
    out[#out + 1] = "  ⚠ sandbox off: the entry says sandbox = false, so the server runs with all of your rights and can read your keys, your credentials and the vault's folder\n"
  elseif c.loose then
    out[#out + 1] = "  ⚠ sandbox: " .. c.line .. "\n"
  else
    labelled(out, "sandbox", wrap(c.line))
  end
  for _, n in ipairs(c.notes or {}) do
    out[#out + 1] = "  ⚠ sandbox: " .. line(n) .. "\n"
  end
end

---The lines of a consent screen saying what will run or be reached, each
---ending in a newline: every word of the command line, the folder, each
---variable or header and the URL on lines of their own, rendered visibly
---and folded, never cut; then a warning for each line break and each
---secret put where others read it.
---@param s tai.ConsentScreen
---@return string
function M.body(s)
  local out = {}
  if s.instructions and s.instructions ~= "" then
    -- the fold's own markers say what is left out: no note beside them
    local shown = tai.term.fold(s.instructions, 8, 1600)
    local lines = {}
    for l in (shown .. "\n"):gmatch("(.-)\n") do
      for _, w in ipairs(wrap((line(l):gsub("%s+$", "")))) do lines[#lines + 1] = w end
    end
    labelled(out, "says", lines)
  end
  if s.found and s.found ~= "" then
    labelled(out, "from", { line(s.found) })
  end
  if s.transport == "stdio" then
    show(out, "run", s.argv or {})
    local cwd, dir = s.cwd or "", s.dir or ""
    if cwd == "" and dir ~= "" then
      show(out, "cwd", { dir }, function() return " (tai's working directory)" end)
    elseif cwd == "" then
      out[#out + 1] = "  cwd:     (tai's working directory)\n"
    elseif dir ~= "" and dir ~= cwd then
      show(out, "cwd", { dir }, function() return " (from " .. line(cwd) .. ")" end)
    else
      show(out, "cwd", { cwd })
    end
    local env = s.env or {}
    if #env > 0 then
      local words = {}
      for i, v in ipairs(env) do
        words[i] = v.shown and (v.name .. "=" .. (v.value or "")) or v.name
      end
      show(out, "env", words, function(i)
        if env[i].shown then return from(env[i]) end
        return from(env[i]) .. "  (value not shown: a secret)"
      end)
    end
    sandbox(out, s.sandbox)
  else
    show(out, "url", { s.url or "" })
    if s.host_note and s.host_note ~= "" then out[#out + 1] = "  " .. s.host_note .. "\n" end
    local headers = s.headers or {}
    if #headers > 0 then
      local names = {}
      for i, h in ipairs(headers) do names[i] = h.name end
      show(out, "headers", names, function(i)
        return from(headers[i]) .. (i == #headers and "  (values not shown)" or "")
      end)
    end
    if s.oauth and s.oauth ~= "" then labelled(out, "oauth", { line(s.oauth) }) end
    if s.client_secret and s.client_secret ~= "" then
      out[#out + 1] = "  ⚠ " .. line(s.client_secret) .. " goes to the authorization server that " .. line(s.server) ..
        " names at login, which may be anywhere: answer y only if you trust this server's URL with that secret\n"
    end
  end
  local breaks = s.breaks or {}
  if #breaks > 0 then
    out[#out + 1] = string.format("  ⚠ %s %s a line break (shown as \\n or \\r above): no real server needs a line break in its command line; read every line above before you answer\n",
      table.concat(breaks, ", "), verb(breaks, "holds", "hold"))
  end
  for _, x in ipairs(s.exposed or {}) do
    out[#out + 1] = "  ⚠ " .. M.exposure(x) .. "\n"
  end
  local proposed = s.proposed or {}
  if #proposed > 0 then
    out[#out + 1] = string.format("  ⚠ a model proposed this server, and it asks for %s: say yes only if you grant that yourself\n",
      table.concat(proposed, "; "))
  end
  local runtime = s.runtime or {}
  if #runtime > 0 then
    local names = {}
    for i, n in ipairs(runtime) do names[i] = line(n) end
    out[#out + 1] = string.format("  ⚠ env %s %s what the server's runtime runs (code loaded first, or where code and packages come from): read the value above; it runs with the server's grants\n",
      table.concat(names, ", "), verb(names, "changes", "change"))
  end
  return table.concat(out)
end

-- why is the screen's first line: what is about to happen.
local function why(s)
  local name = line(s.server)
  local remote = #(s.argv or {}) == 0 and (s.url or "") ~= ""
  if s.changed and remote then
    return "MCP server " .. name .. " would be reached at an address or with headers that differ from the ones you consented to:"
  elseif s.changed then
    return "MCP server " .. name .. " would start with a command or sandbox that differs from the one you consented to:"
  elseif remote then
    return "tai is about to connect to MCP server " .. name .. " for the first time:"
  end
  return "tai is about to start MCP server " .. name .. " for the first time:"
end

---The consent screen: its body (M.body) and the whole question a person
---answers, body included: why it is asked, what will run, then "Add it?
---[y/d/N]" for a new server (y: enabled for s.profile, d: disabled) or
---"Start it? [y/N]" for one whose command changed.
---@param s tai.ConsentScreen
---@return string body
---@return string question
function M.screen(s)
  local body = M.body(s)
  local first = why(s)
  local text = body
  local _, n = body:gsub("\n", "")
  if n > 20 then
    local what = ""
    if #(s.argv or {}) > 0 then
      what = string.format("; it runs %s with %d argument(s)", tai.term.words({ s.argv[1] })[1], #s.argv - 1)
    end
    text = text .. string.format("  (%d lines%s: scroll up to the line after \"%s\" to read them all)\n", n, what,
      (first:gsub("[\\\"]", "\\%0")))
  end
  local q = first .. "\n" .. text
  if s.changed then
    return body, q .. "Start it? [y/N]"
  end
  return body, q .. string.format("  y: add it and enable it for profile %s\n  d: add it disabled (/mcp enable %s enables it later)\n  N: no, start nothing\nAdd it? [y/d/N]",
    line(s.profile), line(s.server))
end

return M
