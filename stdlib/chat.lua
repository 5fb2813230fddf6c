-- chat.lua: how an agent turn looks on the terminal, shared by the REPL and
-- tai -p. Replace or wrap any function from init.lua:
--   local chat = require("chat")
--   chat.tool_line = function(ev) return "tool: " .. ev.name end
local tai = require("tai")

local M = {}

-- spinner frames shown while the model is silent (on a terminal only).
M.frames = { "⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏" }

-- outcome marks for the end of a tool line.
M.marks = { ok = "✓", error = "✗", denied = "✗ denied", unknown = "✗ unknown tool", cancelled = "✗ cancelled" }

-- short(v, n) renders a value on one line, at most n characters.
function M.short(v, n)
  local s
  if type(v) == "table" then
    s = tai.json.encode(v) or "{…}"
  else
    s = tostring(v)
  end
  s = s:gsub("%s+", " ")
  if #s > n then s = s:sub(1, n - 1) .. "…" end
  return s
end

-- args_line(args) renders arguments as k=v pairs, sorted, each shortened.
function M.args_line(args)
  local keys = {}
  for k in pairs(args or {}) do keys[#keys + 1] = tostring(k) end
  table.sort(keys)
  local parts = {}
  for _, k in ipairs(keys) do parts[#parts + 1] = k .. "=" .. M.short(args[k], 40) end
  local s = table.concat(parts, " ")
  if #s > 120 then s = s:sub(1, 119) .. "…" end
  return s
end

-- tool_line(ev) is the start of the line shown when a tool is called.
function M.tool_line(ev)
  local a = M.args_line(ev.args)
  if a == "" then return "⚙ " .. ev.name end
  return "⚙ " .. ev.name .. " " .. a
end

-- duration(ms) renders a duration.
function M.duration(ms)
  if ms < 1000 then return string.format("%d ms", math.floor(ms + 0.5)) end
  return string.format("%.1f s", ms / 1000)
end

-- new(o) returns a view of one turn: o.write(s) prints the answer,
-- o.note(s) prints tool lines and the spinner (may be the same stream),
-- o.spinner says whether to animate. view.opts(extra) gives tai.chat's
-- options; view.finish() ends the last line.
function M.new(o)
  local view = { at_start = true, open = nil }
  local same = o.note == o.write

  -- newline() ends a partly written line of either kind.
  function view.newline()
    if view.spinning then
      o.note("\r\27[K")
      view.spinning = false
    end
    if view.open then
      o.note("\n")
      view.open = nil
    end
    if not view.at_start and same then
      o.write("\n")
      view.at_start = true
    end
  end

  local function text(s)
    if view.spinning then
      o.note("\r\27[K")
      view.spinning = false
    end
    if view.open then
      o.note("\n")
      view.open = nil
    end
    if s == "" then return end
    o.write(s)
    view.at_start = s:sub(-1) == "\n"
  end

  local function waiting(on, tick)
    if not o.spinner then return end
    if on then
      if not view.at_start and same then o.write("\n") view.at_start = true end
      if view.open then o.note("\n") view.open = nil end
      o.note("\r" .. M.frames[(tick or 0) % #M.frames + 1] .. " thinking…")
      view.spinning = true
    elseif view.spinning then
      o.note("\r\27[K")
      view.spinning = false
    end
  end

  local function tool_start(ev)
    view.newline()
    if not view.at_start then
      o.write("\n")
      view.at_start = true
    end
    o.note(M.tool_line(ev))
    view.open = ev.id
  end

  local function tool_end(ev)
    local mark = (M.marks[ev.outcome] or ev.outcome) .. " " .. M.duration(ev.duration_ms or 0)
    if view.spinning then
      o.note("\r\27[K")
      view.spinning = false
    end
    if view.open == ev.id then
      o.note(" " .. mark .. "\n")
    else
      if view.open then o.note("\n") end
      o.note("  " .. ev.name .. " " .. mark .. "\n")
    end
    view.open = nil
  end

  function view.opts(extra)
    local t = { on_text = text, on_waiting = waiting, on_tool_start = tool_start, on_tool_end = tool_end }
    for k, v in pairs(extra or {}) do t[k] = v end
    return t
  end

  function view.finish()
    if view.spinning then
      o.note("\r\27[K")
      view.spinning = false
    end
    if view.open then o.note("\n") view.open = nil end
    if not view.at_start then
      o.write("\n")
      view.at_start = true
    end
  end

  return view
end

-- consent_text(c) is the consent screen's first line.
function M.consent_text(c)
  local where = ""
  if c.origin and c.origin ~= "" then where = " (" .. c.origin .. ")" end
  return string.format("⚠ %s%s wants to run · args %s", c.tool, where, c.digest)
end

-- full_args(c) renders the arguments in full, one per line.
function M.full_args(c)
  local keys = {}
  for k in pairs(c.args or {}) do keys[#keys + 1] = tostring(k) end
  table.sort(keys)
  local lines = {}
  for _, k in ipairs(keys) do
    local v = c.args[k]
    if type(v) == "table" then v = tai.json.encode(v) end
    lines[#lines + 1] = "  " .. k .. " = " .. tostring(v)
  end
  if #lines == 0 then return "  (no arguments)" end
  return table.concat(lines, "\n")
end

-- prompter(get_rl, say [, before]) returns the consent and question
-- functions for tai.prompter, asking through the readline handle get_rl()
-- returns: y runs the call, n (or Enter, Ctrl-C, Ctrl-D) refuses it, a
-- shows the arguments in full and asks again. say(line) prints; before()
-- runs first (to end a partly written line).
function M.prompter(get_rl, say, before)
  local function confirm(c)
    if before then before() end
    say(M.consent_text(c))
    while true do
      local line = get_rl():read("  allow? [y]es / [n]o / [a]rguments: ")
      if not line then return false end
      local a = line:match("^%s*(%a*)"):lower()
      if a == "y" or a == "yes" then return true end
      if a == "a" or a == "args" or a == "arguments" then
        say(M.full_args(c))
      elseif a == "n" or a == "no" or a == "" then
        return false
      else
        say("  answer y, n or a")
      end
    end
  end
  local function ask(q)
    if before then before() end
    say("? " .. q)
    local line, err = get_rl():read("answer> ")
    if not line then return nil, err end
    return line
  end
  return { confirm = confirm, ask = ask }
end

-- oneshot(prompt) runs tai -p: one turn, the answer streamed to stdout,
-- tool lines (and a spinner on a terminal) on stderr. Piped stdin is added
-- to the message as context. Returns the exit status.
function M.oneshot(prompt)
  local message = prompt
  if not tai.term.isatty("stdin") then
    local input, err = tai.term.read_stdin()
    if not input then
      tai.term.warn("tai: " .. err)
      return 1
    end
    if input:match("%S") then
      message = prompt .. "\n\nInput (from stdin):\n" .. input
    end
  end
  local rl
  if tai.term.isatty("stdin") and tai.term.isatty("stderr") then
    local function get_rl()
      rl = rl or tai.term.readline({ output = "stderr" })
      return rl
    end
    tai.prompter(M.prompter(get_rl, function(s) tai.term.ewrite(s .. "\n") end))
  end
  local view = M.new({ write = tai.term.write, note = tai.term.ewrite, spinner = tai.term.isatty("stderr") })
  local answer, err = tai.chat(message, view.opts())
  view.finish()
  tai.prompter(nil)
  if rl then rl:close() end
  if not answer then
    tai.term.warn("tai: " .. tostring(err))
    return 1
  end
  return 0
end

return M
