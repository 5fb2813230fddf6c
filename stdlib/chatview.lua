-- chatview.lua (tai.chatview): how an agent turn looks on the terminal,
-- shared by the REPL and tai -p; tai.chat runs the turn. Replace or wrap
-- any function from init.lua, or put your own in lua/tai/chatview.lua:
--   local chat = require("tai.chatview")
--   chat.tool_line = function(ev) return "tool: " .. ev.name end
local tai = require("tai")

local M = {}

-- spinner frames shown while the model is silent (on a terminal only).
M.frames = { "⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏" }

-- outcome marks for the end of a tool line.
M.marks = {
  [tai.outcome.OK] = "✓", [tai.outcome.ERROR] = "✗", [tai.outcome.DENIED] = "✗ denied",
  [tai.outcome.UNKNOWN] = "✗ unknown tool", [tai.outcome.CANCELLED] = "✗ cancelled",
}

-- clean(s) makes text from the model, a tool or a server safe to show:
-- terminal control sequences, carriage returns and bidi overrides are
-- rendered visibly (\x1b, \x0d, \u202e) instead of acting on the screen.
-- Newlines and tabs are kept.
---@param s any
---@return string
function M.clean(s)
  return tai.term.clean(tostring(s))
end

-- cut(s, n) shortens s to at most n bytes, ending with … when cut, never
-- in the middle of a UTF-8 character.
local function cut(s, n)
  if #s <= n then return s end
  s = s:sub(1, n - 1)
  local last = s:find("[\192-\255][\128-\191]*$")
  if last then
    local lead = s:byte(last)
    local want = lead >= 240 and 4 or lead >= 224 and 3 or 2
    if #s - last + 1 < want then s = s:sub(1, last - 1) end
  end
  return s .. "…"
end

-- columns(s) counts the characters of s, the columns it takes on a
-- terminal (one per character).
---@param s string
---@return integer
function M.columns(s)
  local _, n = s:gsub("[^\128-\191]", "")
  return n
end

-- spaced(s, n) is s with each run of white space made one space, worked
-- out only as far as its first n + 1 bytes, which is all cut(…, n) reads:
-- a megabyte-long value costs no more than a short one.
local function spaced(s, n)
  local out, step, i = "", math.max(4 * n, 64), 1
  while i <= #s and #out <= n do
    out = (out .. s:sub(i, i + step - 1)):gsub("%s+", " ")
    i = i + step
  end
  return out
end

-- short(v, n) renders a value on one line, at most n characters.
---@param v any
---@param n integer
---@return string
function M.short(v, n)
  local s
  if type(v) == "table" then
    s = tai.json.encode(v) or "{…}"
  else
    s = tostring(v)
  end
  return cut(spaced(M.clean(s), n), n)
end

-- args_line(args) renders arguments as k=v pairs, sorted, each shortened.
---@param args table
---@return string
function M.args_line(args)
  local keys = {}
  for k in pairs(args or {}) do keys[#keys + 1] = tostring(k) end
  table.sort(keys)
  local parts = {}
  for _, k in ipairs(keys) do parts[#parts + 1] = M.short(k, 40) .. "=" .. M.short(args[k], 40) end
  return cut(table.concat(parts, " "), 120)
end

-- tool_line(ev) is the start of the line shown when a tool is called.
---@param ev table
---@return string
function M.tool_line(ev)
  local a = M.args_line(ev.args)
  local name = M.short(ev.name, 80)
  if a == "" then return "⚙ " .. name end
  return "⚙ " .. name .. " " .. a
end

-- duration(ms) renders a duration.
---@param ms number
---@return string
function M.duration(ms)
  if ms < 1000 then return string.format("%d ms", math.floor(ms + 0.5)) end
  return string.format("%.1f s", ms / 1000)
end

-- running_text(names, ms, width) is the spinner's text while tools run:
-- their names and the seconds they have taken ("shell · 12 s"), cut to
-- fit width columns (0: unknown) so that redrawing it stays on one row.
---@param names string[]
---@param ms number
---@param width integer
---@return string
function M.running_text(names, ms, width)
  local secs = string.format("%d s", math.floor(ms / 1000))
  if tai.term.color() then secs = "\27[2m" .. secs .. "\27[0m" end
  local list = table.concat(names, ", ")
  if width and width > 0 then list = cut(list, math.max(8, width - 16)) end
  return list .. " · " .. secs
end

-- progress_text(ev) renders a running tool's progress (on_tool_progress):
-- a bar and "3/5" when the tool gave a total and 0 <= progress <= total,
-- else the count alone; each number short (1e+308, not 309 digits), then
-- its message. The message comes cleaned and redacted, and is cut here.
---@param ev table
---@return string
function M.progress_text(ev)
  local function num(n)
    if n ~= n or n == math.huge or n == -math.huge then return "?" end
    if n == math.floor(n) and math.abs(n) < 1e9 then return string.format("%d", n) end
    if math.abs(n) >= 1e9 or math.abs(n) < 0.1 then return string.format("%.3g", n) end
    return string.format("%.1f", n)
  end
  local p, total = tonumber(ev.progress) or 0, tonumber(ev.total) or 0
  local text
  if total > 0 and p >= 0 and p <= total then
    local filled = math.floor(p / total * 10 + 0.5)
    text = string.rep("█", filled) .. string.rep("░", 10 - filled) .. " " .. num(p) .. "/" .. num(total)
  else
    text = num(p)
  end
  if ev.message and ev.message ~= "" then text = text .. " " .. M.short(ev.message, 60) end
  return text
end

-- distance(a, b) is the edit distance between two strings (bytes).
local function distance(a, b)
  local prev = {}
  for j = 0, #b do prev[j] = j end
  for i = 1, #a do
    local cur = { [0] = i }
    for j = 1, #b do
      local cost = a:byte(i) == b:byte(j) and 0 or 1
      cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
    end
    prev = cur
  end
  return prev[#b]
end

-- closest(name, list [, n]) returns the n (default 3) names of list
-- nearest to name: the ones holding it first, then by edit
-- distance (case ignored), ties in list order.
---@param name string
---@param list string[]
---@param n? integer
---@return string[]
function M.closest(name, list, n)
  local want = name:lower()
  local scored = {}
  for i, cand in ipairs(list) do
    local c = cand:lower()
    local score = distance(want, c)
    if want ~= "" and c:find(want, 1, true) then score = score - 1000 end
    scored[#scored + 1] = { name = cand, score = score, i = i }
  end
  table.sort(scored, function(a, b)
    if a.score ~= b.score then return a.score < b.score end
    return a.i < b.i
  end)
  local out = {}
  for k = 1, math.min(n or 3, #scored) do out[k] = scored[k].name end
  return out
end

-- retry_text(n) is how a retry of the model request is shown, from
-- tai.chat's on_retry notice: "rate limited (429); retrying in 30s,
-- attempt 2/4".
---@param n table
---@return string
function M.retry_text(n)
  return M.short(n.text or n.reason or "retrying", 160)
end

-- styles are the ANSI codes styler uses: a fence line, a line inside a
-- code block, a heading.
M.styles = { fence = "2", code = "36", heading = "1" }

-- styler() returns a filter that colours Markdown as it streams, line by
-- line: code blocks (``` fences), headings, and `inline code` and **bold**
-- on plain lines. It holds back at most the
-- first characters of a line until it can tell what the line is.
--   st.push(s) -> text to show      st.flush() -> what it still holds
---@return {push: fun(s: string): string, flush: fun(): string}
function M.styler()
  local st = { bol = true, fence = false, head = "", open = false, plain = false, inline = false }
  -- text(t) is t of the current line, `inline code` coloured on plain
  -- lines.
  -- bold(t) turns **bold** on plain lines into bold text, holding back a
  -- trailing * until the next piece shows whether a second one follows.
  local function bold(t)
    t = (st.star or "") .. t
    st.star = nil
    if t:sub(-1) == "*" and t:sub(-2) ~= "**" then st.star, t = "*", t:sub(1, -2) end
    if not t:find("**", 1, true) then return t end
    return (t:gsub("%*%*", function()
      st.bold = not st.bold
      return st.bold and "\27[1m" or "\27[22m"
    end))
  end
  local function text(t)
    if not st.plain then return t end
    if not st.inline and not t:find("`", 1, true) then return bold(t) end
    t = (st.star or "") .. t
    st.star = nil
    if not t:find("`", 1, true) then return t end
    return (t:gsub("`", function()
      st.inline = not st.inline
      if st.inline then return "\27[" .. M.styles.code .. "m`" end
      return "`\27[0m"
    end))
  end
  -- eol(out) ends the line's styles.
  local function eol(out)
    if st.star then out[#out + 1] = st.star end
    if st.open or st.inline or st.bold then out[#out + 1] = "\27[0m" end
    st.open, st.inline, st.bold, st.star = false, false, false, nil
  end
  local function start(style, out)
    if style then
      out[#out + 1] = "\27[" .. style .. "m"
      st.open = true
    end
    st.plain = style == nil
    out[#out + 1] = text(st.head)
    st.head, st.bol = "", false
  end
  -- decide() styles the held line start when it can tell what it is.
  local function decide(out, final)
    local h = st.head
    if h:sub(1, 3) == "```" then
      st.fence = not st.fence
      return start(M.styles.fence, out)
    end
    if st.fence then
      if not final and ("```"):sub(1, #h) == h then return end
      return start(M.styles.code, out)
    end
    if not final and (("```"):sub(1, #h) == h or h:match("^#+$") and #h <= 6) then return end
    if h:match("^#+ ") then return start(M.styles.heading, out) end
    return start(nil, out)
  end
  function st.push(s)
    local out = {}
    local i = 1
    while i <= #s do
      if st.bol then
        local c = s:sub(i, i)
        i = i + 1
        if c == "\n" then
          if st.head ~= "" then decide(out, true) end
          eol(out)
          out[#out + 1] = "\n"
          st.bol = true
        else
          st.head = st.head .. c
          decide(out, false)
        end
      else
        local nl = s:find("\n", i, true)
        if nl then
          out[#out + 1] = text(s:sub(i, nl - 1))
          eol(out)
          out[#out + 1] = "\n"
          st.bol = true
          i = nl + 1
        else
          out[#out + 1] = text(s:sub(i))
          i = #s + 1
        end
      end
    end
    return table.concat(out)
  end
  function st.flush()
    local out = {}
    if st.bol and st.head ~= "" then decide(out, true) end
    eol(out)
    st.bol = true
    return table.concat(out)
  end
  return st
end

-- new(o) returns a view of one turn: o.write(s) prints the answer,
-- o.note(s) prints tool lines and the spinner (may be the same stream),
-- o.spinner says whether to animate, o.redactor (from tai.vault.redactor())
-- redacts the answer as it streams. A retry of the model request (rate
-- limit, server error) is shown as the spinner's text when animating,
-- else (or with o.retry_lines) as a line of its own: o.retry_prefix ..
-- text. Everything the model sends is shown through M.clean. With
-- o.markdown, code blocks and headings are coloured (see styler). o.width
-- is the terminal's width, for view.before_question().
-- view.opts(extra) gives tai.chat's options; view.finish() ends the last
-- line.
---@param o table
---@return table
function M.new(o)
  local view = { at_start = true, open = nil, running = {}, progress = {} }
  local same = o.note == o.write
  local red = o.redactor
  local md = o.markdown and M.styler() or nil

  -- unspin() takes the spinner's line back; close_open() ends an open
  -- tool line.
  local function unspin()
    if view.spinning then
      o.note("\r\27[K")
      view.spinning = false
    end
  end
  local function close_open()
    if view.open then
      o.note("\n")
      view.open = nil
    end
  end

  -- show(s) prints answer text, ending a spinner or an open tool line.
  local function show(s)
    view.status = nil
    unspin()
    close_open()
    if s == "" then return end
    local text = M.clean(s)
    if md then text = md.push(text) end
    o.write(text)
    view.at_start = s:sub(-1) == "\n"
  end

  -- flush() shows the answer text the redactor (and the Markdown styler)
  -- still holds.
  local function flush()
    if red then
      local rest = red:flush()
      if rest ~= "" then show(rest) end
    end
    if md then
      local rest = md.flush()
      if rest ~= "" then o.write(rest) end
    end
  end

  -- newline() ends a partly written line of either kind.
  function view.newline()
    flush()
    unspin()
    close_open()
    if not view.at_start and same then
      o.write("\n")
      view.at_start = true
    end
  end

  -- before_notice() puts a notice said during the turn (a warning from
  -- a server's reader) on a line of its own: the spinner is taken back,
  -- an open tool line or a partly written answer line is ended.
  function view.before_notice()
    unspin()
    close_open()
    if not view.at_start and same then
      o.write("\n")
      view.at_start = true
    end
  end

  -- before_question() makes room for a consent screen: the open tool
  -- line, which the screen repeats, is taken back when it fits on one row
  -- of o.width (the terminal's columns; 0 when unknown), else ended.
  function view.before_question()
    if view.open and not view.spinning and (o.width or 0) > view.open_width then
      flush()
      o.note("\r\27[K")
      view.open = nil
      return
    end
    view.newline()
  end

  local function text(s)
    if red then s = red:push(s) end
    show(s)
  end

  -- draw(tick, text) draws the spinner's frame for tick with text, on a
  -- line of its own.
  local function draw(tick, text)
    if not view.at_start and same then o.write("\n") view.at_start = true end
    close_open()
    o.note("\r" .. M.frames[(tick or 0) % #M.frames + 1] .. " " .. text .. "\27[K")
    view.spinning = true
  end

  -- spin(tick) draws the spinner with its status: "thinking…", or the
  -- retry being waited for.
  local function spin(tick)
    draw(tick, view.status or "thinking…")
  end

  local function waiting(on, tick)
    if not o.spinner then return end
    if on then
      spin(tick)
    else
      view.status = nil
      unspin()
    end
  end

  local function retry(n)
    local line = M.retry_text(n)
    if o.spinner and not o.retry_lines then
      view.status = line
      spin(0)
      return
    end
    view.newline()
    if not view.at_start then
      o.write("\n")
      view.at_start = true
    end
    o.note((o.retry_prefix or "") .. line .. "\n")
  end

  -- notice(n) says, on a line of its own, the model picked for a profile
  -- that names none (tai.chat's on_notice).
  local function notice(n)
    unspin()
    view.newline()
    if not view.at_start then
      o.write("\n")
      view.at_start = true
    end
    o.note((o.retry_prefix or "") .. M.short(n.text or "", 200) .. "\n")
  end

  -- running(on, tick, ms, status) draws, while the approved calls run, a
  -- spinner naming them, each with the progress it reported, and the
  -- time they have taken, or status when a
  -- call waits for an MCP server's launcher to fetch it ("memory: npx is
  -- installing …"). A tool line still open (no question came between) is
  -- left alone for the first second.
  local function running(on, tick, ms, status)
    if not o.spinner then return end
    if not on then
      unspin()
      return
    end
    if view.open and (ms or 0) < 1000 then return end
    local names = {}
    for id, n in pairs(view.running) do
      local p = view.progress[id]
      names[#names + 1] = p and (n .. " " .. p) or n
    end
    if #names == 0 then return end
    table.sort(names)
    local text = M.running_text(names, ms or 0, o.width)
    if status and status ~= "" then
      text = M.short(status, (o.width and o.width > 8) and (o.width - 4) or 200)
    end
    draw(tick, text)
  end

  local function tool_start(ev)
    view.running[ev.id] = M.short(ev.name, 40)
    view.newline()
    if not view.at_start then
      o.write("\n")
      view.at_start = true
    end
    local line = M.tool_line(ev)
    o.note(line)
    view.open, view.open_width = ev.id, M.columns(line)
  end

  -- tool_progress(ev) keeps what a running tool reported for its part of
  -- the running line (progress_text), drawn at the next tick.
  local function tool_progress(ev)
    if view.running[ev.id] then view.progress[ev.id] = M.progress_text(ev) end
  end

  local function tool_end(ev)
    view.running[ev.id] = nil
    view.progress[ev.id] = nil
    local mark = (M.marks[ev.outcome] or M.short(ev.outcome, 40)) .. " " .. M.duration(ev.duration_ms or 0)
    if ev.reason then mark = mark .. " (" .. M.short(ev.reason, 80) .. ")" end
    unspin()
    if view.open == ev.id then
      o.note(" " .. mark .. "\n")
    else
      if view.open then o.note("\n") end
      o.note("  " .. M.short(ev.name, 80) .. " " .. mark .. "\n")
    end
    view.open = nil
    -- The images, audio and blobs the result holds, one line each.
    for _, m in ipairs(ev.media or {}) do o.note("    " .. M.short(m, 120) .. "\n") end
    -- What happened while it ran (a server's question declined), one line each.
    for _, n in ipairs(ev.notes or {}) do o.note("    ↳ " .. M.short(n, 160) .. "\n") end
  end

  function view.opts(extra)
    local t = { on_text = text, on_waiting = waiting, on_tool_start = tool_start, on_tool_end = tool_end,
      on_tool_progress = tool_progress, on_retry = retry, on_running = running, on_notice = notice }
    for k, v in pairs(extra or {}) do t[k] = v end
    return t
  end

  function view.finish()
    view.newline()
    if not view.at_start then
      o.write("\n")
      view.at_start = true
    end
  end

  return view
end

-- consent_text(c) is the consent screen's first line.
---@param c table
---@return string
function M.consent_text(c)
  local where = ""
  if c.origin and c.origin ~= "" then where = " (" .. M.short(c.origin, 80) .. ")" end
  return string.format("⚠ %s%s wants to run", M.short(c.tool, 80), where)
end

-- fold_lines and fold_bytes bound how much of one argument the consent
-- screen shows before "[s]how everything" is needed; diff_lines how much
-- of a diff.
M.fold_lines = 8
M.fold_bytes = 600
M.diff_lines = 40

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t or {}) do keys[#keys + 1] = tostring(k) end
  table.sort(keys)
  return keys
end

-- value_text(v) renders an argument value: strings as they are, other
-- values as JSON.
local function value_text(v)
  if type(v) == "table" then
    local compact = tai.json.encode(v) or "{…}"
    if #compact <= 80 then return compact end
    return tai.json.encode(v, { indent = "  " }) or compact
  end
  return tostring(v)
end

-- fold(text, full) returns text made safe to show, whole when full, or
-- else its first and last lines with runs of blanks counted when it is
-- long (tai.term.fold), and a note of what was left out ("" when nothing).
---@param text string
---@param full? boolean
---@param max_lines? integer
---@param max_bytes? integer
---@return string
---@return string
function M.fold(text, full, max_lines, max_bytes)
  if full then return M.clean(text), "" end
  return tai.term.fold(text, max_lines or M.fold_lines, max_bytes or M.fold_bytes)
end

-- full_args(c [, full]) renders the arguments one per line: short values
-- after the name, long or multi-line ones below it, indented with a bar
-- so they cannot pass for arguments of their own, folded unless full.
---@param c table
---@param full? boolean
---@return string
function M.full_args(c, full)
  local lines = {}
  for _, k in ipairs(sorted_keys(c.args)) do
    local text = value_text(c.args[k])
    local name = tai.term.clean(k, true)
    if not text:find("\n", 1, true) and #text <= 80 then
      lines[#lines + 1] = "  " .. name .. " = " .. M.clean(text)
    else
      local shown, more = M.fold(text, full)
      lines[#lines + 1] = "  " .. name .. " ="
      lines[#lines + 1] = "      │ " .. shown:gsub("\n", "\n      │ ")
      if more ~= "" then lines[#lines + 1] = "      " .. more end
    end
  end
  if #lines == 0 then return "  (no arguments)" end
  return table.concat(lines, "\n")
end

-- read_file_text(path) reads a file the way the tools see it (relative to
-- the working directory), nil when it cannot be read.
local function read_file_text(path)
  if type(path) ~= "string" or path == "" then return nil end
  if path:sub(1, 1) ~= "/" then path = tai.cwd() .. "/" .. path end
  local text, truncated = tai.read_text(path, 4 * 1024 * 1024)
  if not text or truncated then return nil end
  return text
end

-- snippet_diff(old, new) diffs two pieces of text that need not end with
-- a newline (edit_file's strings).
local function snippet_diff(old, new)
  local function line(t) return t:sub(-1) == "\n" and t or t .. "\n" end
  return tai.diff(line(old), line(new), 3)
end

-- change(c) returns what a file tool call would do to the file, as diff
-- hunks, with a heading ("edit_file: a.txt" …); nil for other tools.
---@param c table
---@return string|nil
---@return string|nil
function M.change(c)
  local a = c.args or {}
  if c.origin and c.origin ~= "" then return nil end
  if c.tool == "edit_file" and type(a.old_string) == "string" and type(a.new_string) == "string" then
    local old = read_file_text(a.path)
    if a.old_string == "" then
      return "changes to " .. M.clean(tostring(a.path)) .. " (old_string is empty: the edit will be refused):",
        snippet_diff(a.old_string, a.new_string)
    end
    if old then
      local s, e = old:find(a.old_string, 1, true)
      local count, pos = 0, 1
      while true do
        local fs, fe = old:find(a.old_string, pos, true)
        if not fs then break end
        count, pos = count + 1, fe + 1
      end
      if s and count > 1 and not a.replace_all then
        return string.format("changes to %s (old_string occurs %d times: the edit will be refused without replace_all):",
          M.clean(a.path), count), snippet_diff(a.old_string, a.new_string)
      end
      if s then
        local new
        if a.replace_all then
          local parts, pos = {}, 1
          while true do
            local fs, fe = old:find(a.old_string, pos, true)
            if not fs or a.old_string == "" then break end
            parts[#parts + 1] = old:sub(pos, fs - 1) .. a.new_string
            pos = fe + 1
          end
          parts[#parts + 1] = old:sub(pos)
          new = table.concat(parts)
        else
          new = old:sub(1, s - 1) .. a.new_string .. old:sub(e + 1)
        end
        return "changes to " .. M.clean(a.path) .. ":", tai.diff(old, new, 3)
      end
      return "changes to " .. M.clean(a.path) .. " (old_string is not in the file as it is now):",
        snippet_diff(a.old_string, a.new_string)
    end
    return "changes to " .. M.clean(tostring(a.path)) .. " (the file cannot be read):", snippet_diff(a.old_string, a.new_string)
  end
  if c.tool == "write_file" and type(a.content) == "string" then
    local old = read_file_text(a.path)
    if old and not a.append then
      if old == a.content then return "writes " .. M.clean(a.path) .. " unchanged", "" end
      return "replaces " .. M.clean(a.path) .. ":", tai.diff(old, a.content, 3)
    elseif old then
      return "appends to " .. M.clean(a.path) .. ":", tai.diff("", a.content, 0)
    end
    return "creates " .. M.clean(tostring(a.path)) .. ":", nil
  end
  return nil
end

-- paint_diff(hunks) colours a diff's lines when colour is on.
---@param hunks string
---@return string
function M.paint_diff(hunks)
  local out = {}
  for line in hunks:gmatch("([^\n]*)\n?") do
    if line ~= "" then
      local code = ({ ["+"] = "32", ["-"] = "31", ["@"] = "36" })[line:sub(1, 1)]
      line = "    " .. M.clean(line)
      if code and tai.term.color() then line = "\27[" .. code .. "m" .. line .. "\27[0m" end
      out[#out + 1] = line
    end
  end
  return table.concat(out, "\n")
end

-- consent_screen(c, full) is everything the consent screen shows above
-- the question: the tool, its arguments, and the change to a file.
---@param c table
---@param full? boolean
---@return string
function M.consent_screen(c, full)
  local parts = { M.consent_text(c) }
  local heading, hunks = M.change(c)
  local args = c.args or {}
  if heading then
    -- the diff stands for the text arguments it is made of
    local rest = {}
    for k, v in pairs(args) do
      if k ~= "content" and k ~= "old_string" and k ~= "new_string" then rest[k] = v end
    end
    parts[#parts + 1] = M.full_args({ args = rest }, full)
    if hunks == nil then
      local shown, more = M.fold(args.content or "", full)
      parts[#parts + 1] = "  " .. heading
      parts[#parts + 1] = M.paint_diff((shown:gsub("[^\n]*", "+%0", 1):gsub("\n", "\n+")) .. "\n")
      if more ~= "" then parts[#parts + 1] = "    " .. more end
    elseif hunks ~= "" then
      parts[#parts + 1] = "  " .. heading
      local shown, more = M.fold(hunks, full, M.diff_lines, 64 * M.diff_lines)
      if full then shown = hunks end
      parts[#parts + 1] = M.paint_diff(shown .. "\n")
      if more ~= "" and not full then parts[#parts + 1] = "    " .. more end
    else
      parts[#parts + 1] = "  " .. heading
    end
  else
    parts[#parts + 1] = M.full_args(c, full)
  end
  return table.concat(parts, "\n")
end

-- consent_question is what the consent screen asks about a tool other
-- than the shell.
M.consent_question = "  allow? [y]es / [n]o / [a]lways this session / always in this [p]roject / [s]how everything: "

-- consent_question_for(c) is what the consent screen asks about the call
-- c, each key saying what it allows: for a shell command, a and p cover
-- the commands that start as this one does (tai.permissions.suggest),
-- never every command; a shell command no prefix can cover is allowed
-- once or refused.
---@param c table the consent ({tool=, origin=, args=})
---@return string question
---@return string|nil prefix the prefix a and p would allow
function M.consent_question_for(c)
  local key = (c.origin and c.origin ~= "") and c.origin or c.tool
  if key ~= "shell" then return M.consent_question, nil end
  local prefix = tai.permissions.suggest(c)
  if prefix and not tai.permissions.allows(c, { tool = "shell", prefix = prefix }) then
    prefix = nil -- what else the call sets (its env, say) no rule covers
  end
  if not prefix then
    return "  allow? [y]es, this once / [n]o / [s]how everything: ", nil
  end
  local p = M.short(prefix, 40)
  return "  allow? [y]es, this once / [n]o / [a]lways '" .. p .. " …' this session / [p]: the same in this project / [s]how everything: ", prefix
end

-- keep_rule(c, rl, say) keeps a rule for this project folder that covers
-- the call c (answer p): for the shell tool, the commands that start with
-- a prefix the person confirms or types; for another tool, every call of
-- it. Returns true when a rule covering c was kept.
---@param c table
---@param rl table
---@param say fun(text: string)
---@return boolean
function M.keep_rule(c, rl, say)
  local key = (c.origin and c.origin ~= "") and c.origin or c.tool
  local rule = { tool = key }
  if key == "shell" then
    local proposal = tai.permissions.suggest(c)
    if not proposal then
      say("  this command is more than a program and its arguments (a shell operator, redirection, variable or glob):" ..
        " no rule covers it; answer y, n or s")
      return false
    end
    if rl.discard and select(2, rl:discard()) == "interrupt" then
      tai.term.interrupt()
      return false
    end
    local line, err = rl:read("  allow here every command that starts with: " .. proposal ..
      " (Enter keeps that, or type the words to keep): ")
    if not line then
      if err == "interrupt" then tai.term.interrupt() end
      return false
    end
    rule.prefix = line:match("%S") and line:match("^%s*(.-)%s*$") or proposal
    if not tai.permissions.allows(c, rule) then
      say("  " .. M.clean(rule.prefix) .. " is not how this command starts, or holds what a shell acts on; nothing kept")
      return false
    end
  end
  local ok, err = tai.permissions.add(rule)
  if not ok then
    say("  the rule was not kept: " .. M.clean(err))
    return false
  end
  local what = rule.prefix and ("commands starting with " .. M.short(rule.prefix, 80)) or M.short(key, 80)
  say("  (" .. what .. " run without asking in this folder from now on; /permissions lists and removes the rules)")
  return true
end

-- answer_key(rl, prompt) reads the answer to a consent question: one key,
-- without Enter, on a terminal (what was typed before the question showed
-- is discarded); else a line, whose first word counts. Returns the answer
-- in lower case ("" for Enter), or nil and "interrupt" or "eof".
local function answer_key(rl, prompt)
  local key, err = nil, "not a terminal"
  if rl.key then key, err = rl:key(prompt) end
  if key then
    if key == "enter" then return "" end
    return key:lower()
  end
  if err ~= "not a terminal" then return nil, err end
  local line, lerr = rl:read(prompt)
  if not line then return nil, lerr end
  return line:match("^%s*(%a*)"):lower()
end

-- tool_budget() is how many tokens the schemas of every enabled tool may
-- take and all be offered to the model, for the REPL, tai -p and served
-- chats alike: repl.tool_share of repl.context_limit (both settable in
-- init.lua).
---@return integer
function M.tool_budget()
  local repl = require("tai.repl")
  return math.max(1, math.floor(repl.context_limit * repl.tool_share))
end

-- choices_of(q) reads the choices a question offers from the bracket that
-- ends it, "[y/d/N]" say: the letters in lower case, the default (the one
-- capital letter) first. nil when q does not end in one with exactly one
-- capital, so Enter always has an answer the question named.
---@param q string
---@return string[]|nil
function M.choices_of(q)
  local inner = tostring(q):match("%[(%a[/%a]*)%]%s*$")
  if not inner then return nil end
  local out, default, capitals = {}, nil, 0
  for c in inner:gmatch("%a") do
    if c:match("%u") then default, capitals = c:lower(), capitals + 1 end
    out[#out + 1] = c:lower()
  end
  if #out < 2 or #inner ~= 2 * #out - 1 or capitals ~= 1 then return nil end
  local list = { default }
  for _, c in ipairs(out) do
    if c ~= default then list[#list + 1] = c end
  end
  return list
end

-- choose(rl, prompt, choices [, say]) asks a single-choice question: on a
-- terminal one key answers, without Enter, and keys typed before the
-- question showed are discarded (rl:key); else a line's first letter.
-- Enter and Ctrl-D give the default, choices[1]; a key that is not a
-- choice asks again, saying which keys answer through say (stderr by
-- default). Returns the choice, or nil and "interrupt" for Ctrl-C.
---@param rl table
---@param prompt string
---@param choices string[]
---@param say? fun(text: string)
---@return string|nil
---@return string|nil
function M.choose(rl, prompt, choices, say)
  while true do
    local a, err = answer_key(rl, prompt)
    if not a then
      if err == "interrupt" then return nil, err end
      return choices[1]
    end
    a = a:sub(1, 1)
    if a == "" then return choices[1] end
    for _, c in ipairs(choices) do
      if a == c then return c end
    end
    local msg = "  answer " .. table.concat(choices, ", ", 2) .. " or " .. choices[1]
    if say then say(msg) else tai.term.ewrite(msg .. "\n") end
  end
end

-- confirm(rl, question) asks a yes/no question ending in [y/N] (see
-- choose): true for y. Ctrl-C gives false and "interrupt".
---@param rl table
---@param question string
---@return boolean
---@return string|nil
function M.confirm(rl, question)
  local a, err = M.choose(rl, question, { "n", "y" })
  return a == "y", err
end

-- elicit_screen(q) is what the person reads before a server's form or
-- URL: which server asks, and its message, folded.
---@param q tai.Elicitation
---@return string
function M.elicit_screen(q)
  local what = q.mode == "url" and "asks you to open a URL" or "asks you to fill in a form"
  local lines = { "? " .. M.short(q.server, 60) .. " " .. what .. ":" }
  local shown, more = M.fold(q.message or "", false, 6, 400)
  lines[#lines + 1] = "  │ " .. shown:gsub("\n", "\n  │ ")
  if more ~= "" then lines[#lines + 1] = "  " .. more end
  if q.mode == "url" then
    lines[#lines + 1] = "  " .. M.clean(q.url)
    local host = "  host: " .. M.clean(q.host)
    if q.unicode then host = host .. " (reads as " .. M.clean(q.unicode) .. ")" end
    lines[#lines + 1] = host
    for _, w in ipairs(q.warnings or {}) do lines[#lines + 1] = "  ⚠ " .. M.clean(w) end
  end
  return table.concat(lines, "\n")
end

-- field_question(f) is the lines that put one field of a form: its
-- title (or name), its description, its choices numbered, and a warning
-- when its name reads as a secret's.
---@param f tai.ElicitField
---@return string
function M.field_question(f)
  local label = M.short(f.title or f.name, 80)
  if f.title and f.title ~= f.name then label = label .. " (" .. M.short(f.name, 40) .. ")" end
  local lines = { "  " .. label }
  if f.description and f.description ~= "" then lines[#lines + 1] = "    " .. M.short(f.description, 200) end
  for i, o in ipairs(f.options or {}) do
    local t = M.short(o.title, 60)
    if o.title ~= o.value then t = t .. " (" .. M.short(o.value, 40) .. ")" end
    lines[#lines + 1] = string.format("    %d) %s", i, t)
  end
  if f.secret then
    lines[#lines + 1] = "    ⚠ this looks like a secret: servers must not ask for secrets in a form (MCP);" ..
      " give it only if you trust this server, or leave it empty"
  end
  return table.concat(lines, "\n")
end

-- elicit_key(rl, prompt, choices, say) asks for one of choices (the
-- first is what Enter gives) and returns it, or "cancel" for Esc, Ctrl-C
-- or Ctrl-D. Without a terminal it reads a line's first letter.
local function elicit_key(rl, prompt, choices, say)
  while true do
    local key, err = nil, "not a terminal"
    if rl.key then key, err = rl:key(prompt) end
    if not key and err ~= "not a terminal" then return "cancel" end
    if key == "" then return "cancel" end
    if key == "enter" then return choices[1] end
    if not key then
      local line = rl:read(prompt)
      if not line then return "cancel" end
      key = line:match("^%s*(%a*)"):lower()
      if key == "" then return choices[1] end
    end
    key = key:sub(1, 1):lower()
    for _, c in ipairs(choices) do
      if key == c then return c end
    end
    say("  answer " .. table.concat(choices, ", ") .. ", or Esc to cancel")
  end
end

-- read_field(rl, f, prompt) reads one field's answer: a field whose name
-- reads as a secret's without echo, as /secret does, when there is a
-- terminal (rl:read_hidden, which pauses the turn's escape watch). nil
-- when the person cancels.
local function read_field(rl, f, prompt)
  if f.secret then
    local read = rl.read_hidden and function(p) return rl:read_hidden(p) end or tai.term.read_hidden
    local v, err = read(prompt .. " (not shown)> ")
    if v or err == "interrupt" then return v end
  end
  return rl:read(prompt .. "> ")
end

-- ask_form(rl, q, say) asks each field of q's form in turn, then shows
-- the answers and asks to send them: y sends (accept), e asks every field
-- again with the answers as defaults, d declines, Esc cancels. Enter
-- takes a field's default; a wrong answer is explained and asked again;
-- Ctrl-C or Ctrl-D on a field cancels. Returns the answer table.
---@param rl table
---@param q tai.Elicitation
---@param say fun(line: string)
---@return table
function M.ask_form(rl, q, say)
  local a = elicit_key(rl, "answer it? [Y]es, [d]ecline, Esc cancels> ", { "y", "d" }, say)
  if a ~= "y" then return { action = (a == "d") and "decline" or "cancel" } end
  local given = {}
  while true do
    local content = {}
    for _, f in ipairs(q.fields or {}) do
      say(M.field_question(f))
      local default = given[f.name] or f.default_text
      local prompt = "  " .. M.short(f.name, 30)
      if f.hint and f.hint ~= "" then prompt = prompt .. " (" .. f.hint .. ")" end
      if f.secret and given[f.name] then
        prompt = prompt .. " [Enter keeps it]"
      elseif default and default ~= "" then
        prompt = prompt .. " [" .. M.short(default, 40) .. "]"
      end
      while true do
        local line = read_field(rl, f, prompt)
        if not line then return { action = "cancel" } end
        if line == "" and default then line = default end
        local v, why = f.check(line)
        if why then
          say("    " .. M.clean(why))
        else
          given[f.name] = line
          content[f.name] = v
          break
        end
      end
    end
    local shown = {}
    for _, f in ipairs(q.fields or {}) do
      if content[f.name] ~= nil then
        local v = M.short(value_text(content[f.name]), 100)
        if f.secret then v = given[f.name] == "" and "(empty)" or "(hidden)" end
        shown[#shown + 1] = "  " .. M.short(f.name, 30) .. " = " .. v
      end
    end
    if #shown > 0 then say(table.concat(shown, "\n")) end
    a = elicit_key(rl, "send this to " .. M.short(q.server, 40) .. "? [Y]es, [e]dit, [d]ecline, Esc cancels> ",
      { "y", "e", "d" }, say)
    if a == "y" then return { action = "accept", content = content } end
    if a == "d" then return { action = "decline" } end
    if a ~= "e" then return { action = "cancel" } end
  end
end

-- prompter(get_rl, say [, before]) returns the consent and question
-- functions for tai.prompter, asking through the readline handle get_rl()
-- returns: y runs the call, n (or Enter, Ctrl-D) refuses it, a runs it and
-- every later call of the same tool in this session without asking (for
-- the shell, every later command that starts as this one does), p
-- keeps a rule for this folder (see keep_rule) and runs it, s shows the
-- arguments and the change in full and asks again; Ctrl-C refuses it and
-- cancels the whole turn. A call a kept rule covers (tai.permissions) never
-- reaches the prompter: the approval runs it without a question. On a terminal a key answers,
-- without Enter, and keys typed before the question showed are discarded.
-- say(line) prints; before() runs first (to end a partly written line).
-- The prompter's always table holds the tools allowed for the session,
-- its prefixes table the shell prefixes ({tool="shell", prefix=}).
-- sample and sample_answer put a server's sampling request to the person
-- (sample_screen, then y, t with its tools, e to edit the prompt, s to
-- show it whole, N) and then the model's answer (sample_answer_screen,
-- y returns it).
---@param get_rl fun(): table
---@param say? fun(line: string)
---@param before? fun()
---@return table
function M.prompter(get_rl, say, before)
  local always, prefixes = {}, {}
  local function confirm(c)
    local key = (c.origin and c.origin ~= "") and c.origin or c.tool
    if always[key] then return true end
    for _, rule in ipairs(prefixes) do
      if tai.permissions.allows(c, rule) then return true end
    end
    if before then before() end
    say(M.consent_screen(c, false))
    local question, prefix = M.consent_question_for(c)
    while true do
      local a, err = answer_key(get_rl(), question)
      if not a then
        if err == "interrupt" then tai.term.interrupt() end
        return false
      end
      if a == "y" or a == "yes" then return true end
      if (a == "a" or a == "always") and key == "shell" then
        if not prefix then
          say("  no rule covers this command (a shell operator, redirection, variable or glob): answer y, n or s")
        else
          prefixes[#prefixes + 1] = { tool = "shell", prefix = prefix }
          say("  (commands starting with " .. M.short(prefix, 80) ..
            " run without asking for the rest of this session; others still ask)")
          return true
        end
      elseif a == "a" or a == "always" then
        always[key] = true
        say("  (" .. M.short(key, 80) .. " runs without asking for the rest of this session)")
        return true
      end
      if a == "a" or a == "always" then
        -- said why above; ask again
      elseif a == "p" and M.keep_rule(c, get_rl(), say) then
        return true
      elseif a == "p" then
        -- keep_rule said why nothing was kept; ask again
      elseif a == "s" or a == "show" then
        say(M.consent_screen(c, true))
      elseif a == "n" or a == "no" or a == "" then
        return false
      else
        say(prefix == nil and key == "shell" and "  answer y, n or s" or "  answer y, n, a, p or s")
      end
    end
  end
  local function ask(q)
    if before then before() end
    say("? " .. M.clean(q))
    local rl = get_rl()
    local choices = M.choices_of(q)
    if choices then
      local a, err = M.choose(rl, "answer> ", choices, say)
      if not a then
        tai.term.interrupt()
        return nil, err
      end
      return a
    end
    if rl.discard and select(2, rl:discard()) == "interrupt" then
      tai.term.interrupt()
      return nil, "interrupt"
    end
    local line, err = rl:read("answer> ")
    if not line then
      if err == "interrupt" then tai.term.interrupt() end
      return nil, err
    end
    return line
  end
  -- sample(q): a server's sampling request, shown in full; y sends it
  -- (t with the tools it offers), e edits the prompt first, s shows it
  -- unfolded, anything else sends nothing.
  local function sample(q)
    if before then before() end
    say(M.sample_screen(q, false))
    local has_tools = q.request and q.request.tools and #q.request.tools > 0
    local question = has_tools and "Send it? y: without its tools, t: with them, e: edit the prompt, s: show all, N: no [y/t/e/s/N] "
      or "Send it? y: yes, e: edit the prompt, s: show all, N: no [y/e/s/N] "
    while true do
      local a, err = answer_key(get_rl(), question)
      if not a then
        if err == "interrupt" then tai.term.interrupt() end
        return "deny"
      end
      if a == "y" or a == "yes" then return "approve" end
      if a == "t" and has_tools then return { action = "approve", tools = true } end
      if a == "s" then say(M.sample_screen(q, true))
      elseif a == "e" then
        local rl = get_rl()
        say("  the prompt now: " .. M.short(M.last_prompt(q.request), 400))
        local line, lerr = rl:read("new prompt> ")
        if not line then
          if lerr == "interrupt" then tai.term.interrupt() end
          return "deny"
        end
        return { action = "approve", prompt = line }
      else
        return "deny"
      end
    end
  end
  -- sample_answer(q, a): the model's answer, shown before it goes back.
  local function sample_answer(q, a)
    say(M.sample_answer_screen(q, a))
    local k, err = answer_key(get_rl(), "Return it to " .. tai.term.clean(q.server, true) .. "? [y/N] ")
    if not k and err == "interrupt" then tai.term.interrupt() end
    return k == "y" or k == "yes"
  end
  -- elicit(q) puts a server's form or URL to the person (see ask_form);
  -- a URL is opened only after y. Esc cancels; Ctrl-C cancels too,
  -- without ending the turn.
  local function elicit(q)
    if before then before() end
    say(M.elicit_screen(q))
    local rl = get_rl()
    if q.mode == "url" then
      local a = elicit_key(rl, "open it in your browser? [y]es, [N]o, Esc cancels> ", { "n", "y" }, say)
      if a == "y" then return { action = "accept" } end
      return { action = (a == "n") and "decline" or "cancel" }
    end
    return M.ask_form(rl, q, say)
  end
  return { confirm = confirm, ask = ask, elicit = elicit, sample = sample, sample_answer = sample_answer, always = always,
    prefixes = prefixes }
end

-- last_prompt(r) is the text of a sampling request's last user message.
---@param r table
---@return string
function M.last_prompt(r)
  for i = #(r.messages or {}), 1, -1 do
    local m = r.messages[i]
    if m.role == "user" then
      local texts = {}
      for _, c in ipairs(m.content or {}) do
        if c.type == "text" then texts[#texts + 1] = c.text end
      end
      return table.concat(texts, "\n")
    end
  end
  return ""
end

-- sample_screen(q, full) is a server's sampling request as the person
-- sees it before anything is sent: who asks and which model would
-- answer, the system prompt, maxTokens, the model preferences, the tools
-- it offers the model, then each message (folded unless full).
---@param q {server: string, model: string, request: table}
---@param full boolean
---@return string
function M.sample_screen(q, full)
  local r = q.request or {}
  local out = { string.format("? %s asks your model (%s) for a completion (MCP sampling); nothing is sent yet:",
    tai.term.clean(q.server, true), tai.term.clean(q.model ~= "" and q.model or "the current profile's", true)) }
  local function block(label, text)
    local shown, note = M.fold(text, full)
    local first = true
    for line in (shown .. "\n"):gmatch("([^\n]*)\n") do
      out[#out + 1] = string.format("  %-11s %s", first and label or "", line)
      first = false
    end
    if note ~= "" then out[#out + 1] = "              " .. note end
  end
  if (r.systemPrompt or "") ~= "" then block("system:", r.systemPrompt) end
  local limits = "max tokens: " .. tostring(r.maxTokens)
  if r.lowered then limits = limits .. string.format(" (it asked for %d)", r.lowered) end
  if r.temperature then limits = limits .. ", temperature " .. tostring(r.temperature) end
  out[#out + 1] = "  " .. limits
  local prefs = r.modelPreferences
  if prefs then
    local parts = {}
    if prefs.hints and #prefs.hints > 0 then parts[#parts + 1] = "hints " .. tai.term.clean(table.concat(prefs.hints, ", "), true) end
    for _, k in ipairs({ "cost", "speed", "intelligence" }) do
      local v = prefs[k .. "Priority"]
      if v then parts[#parts + 1] = string.format("%s %.2g", k, v) end
    end
    if #parts > 0 then out[#out + 1] = "  model preferences (advisory): " .. table.concat(parts, "; ") end
  end
  if r.includeContext and r.includeContext ~= "none" then
    out[#out + 1] = "  it asks for context (" .. tai.term.clean(r.includeContext, true) .. "): tai sends none"
  end
  if r.tools and #r.tools > 0 then
    local names = {}
    for _, t in ipairs(r.tools) do names[#names + 1] = t.name end
    out[#out + 1] = "  tools it offers your model (the server runs them): " .. tai.term.clean(table.concat(names, ", "), true) ..
      (r.toolChoice and (" (toolChoice " .. tai.term.clean(r.toolChoice, true) .. ")") or "")
  end
  for _, m in ipairs(r.messages or {}) do
    local texts = {}
    for _, c in ipairs(m.content or {}) do
      if c.type == "text" or c.type == "tool_result" then
        texts[#texts + 1] = (c.type == "tool_result" and ("[tool_result " .. (c.id or "") .. "] ") or "") .. (c.text or "")
      elseif c.type == "tool_use" then
        texts[#texts + 1] = "[tool_use " .. (c.name or "") .. " " .. M.short(c.input or {}, 200) .. "]"
      else
        texts[#texts + 1] = string.format("[%s %s, %d bytes of base64; not sent to the model]", c.type, c.mimeType or "", c.size or 0)
      end
    end
    block(m.role .. ":", table.concat(texts, "\n"))
  end
  return table.concat(out, "\n")
end

-- sample_answer_screen(q, a) is the model's answer to a sampling request,
-- shown before it goes back to the server.
---@param q {server: string, model: string, request: table}
---@param a {model: string, text: string, tool_calls?: table[], stop_reason: string}
---@return string
function M.sample_answer_screen(q, a)
  local out = { string.format("  %s answered (stop: %s):", tai.term.clean(a.model, true), tai.term.clean(a.stop_reason or "", true)) }
  local shown, note = M.fold(a.text or "", false)
  for line in (shown .. "\n"):gmatch("([^\n]*)\n") do out[#out + 1] = "    " .. line end
  if note ~= "" then out[#out + 1] = "    " .. note end
  for _, tc in ipairs(a.tool_calls or {}) do
    out[#out + 1] = "    asks the server to run " .. tai.term.clean(tc.name, true) .. " " .. M.short(tc.input or {}, 200)
  end
  return table.concat(out, "\n")
end

-- notices(d) lists what the person must be told about how a turn ended,
-- from tai.chat's details: the step limit ran out, the model's output
-- limit cut the answer short, the provider withheld or the model refused
-- the answer, or the answer was empty. Each means the answer is not
-- complete.
---@param d table?
---@return string[]
function M.notices(d)
  local out = {}
  if not d then return out end
  if d.exhausted then
    out[#out + 1] = "the turn stopped at the step limit before the model gave a final answer; " ..
      "ask again to continue, or give the turn more steps (tai.chat max_steps)"
  end
  local reason = d.finish_reason
  if reason == "context_window" then
    out[#out + 1] = "the answer was cut off: the conversation filled the model's context window; " ..
      "/compact it, or start a new one with /new"
  elseif reason == "pause" then
    out[#out + 1] = "the provider paused the answer before it was done; send another message to let it go on"
  elseif d.truncated or reason == "length" then
    out[#out + 1] = "the answer was cut off at the model's output limit (finish reason \"length\"); " ..
      "raise max_tokens in the profile or ask for a shorter answer"
  end
  if reason == "refusal" then
    out[#out + 1] = "the model refused to answer; rephrase the request or ask for something else"
  elseif d.filtered or reason == "content_filter" then
    out[#out + 1] = "the answer was withheld or refused by the provider (finish reason \"content_filter\"); " ..
      "what was shown is not a complete answer: rephrase the request or ask for something else"
  end
  if d.empty then
    out[#out + 1] = "the model returned an empty answer; ask again, rephrase, or try another model or profile"
  end
  return out
end

-- redacted(text) is text with every known secret value replaced; when the
-- vault cannot be opened it returns text and the error.
---@param text string
---@return string
---@return string|nil
function M.redacted(text)
  local out, err = tai.vault.redact(text)
  if not out then return text, err end
  return out
end

-- Conversations ------------------------------------------------------------

-- conversation() returns the state of one conversation as the REPL and
-- tai -p keep it: its vault id once saved, its title (the first message's
-- first line), the system message it is sent with, the usage of its turns
-- and the notes (from !commands) waiting to go with the next message.
--   conv.opts(extra)   tai.chat options for this conversation
--   conv.start()       a fresh conversation (the system message rebuilt)
--   conv.resume(c)     continue c (from tai.conversations.get), marked as
--                      used now in this folder
--   conv.latest()      the conversation last used in this folder (resumed
--                      or updated), or nil
--   conv.save()        keep it in the vault (redacted); returns nil and
--                      "the conversation was not kept: why" when it
--                      could not be kept
--   conv.message(text) text with the waiting notes put before it
--   conv.count(d [, not_a_turn])  adds a turn's usage (tai.chat's details;
--                      a summary's, with not_a_turn)
--   conv.history()     its messages so far
---@return table
function M.conversation()
  local context = require("tai.context")
  local conv = { usage = { input = 0, output = 0, turns = 0 }, notes = {} }

  local function profile()
    local ok, p = pcall(tai.profiles.current)
    if ok then return p end
  end

  function conv.opts(extra)
    local t = { system = conv.system }
    for k, v in pairs(extra or {}) do t[k] = v end
    return t
  end

  function conv.start()
    if conv.system then tai.chat_reset(conv.opts()) end
    conv.id, conv.title, conv.notes, conv.turns = nil, nil, {}, 0
    conv.system = context.system(profile())
    tai.chat_reset(conv.opts())
  end

  -- rebuild() makes the system message again (after a profile switch),
  -- keeping the conversation.
  function conv.rebuild()
    local h, err = tai.chat_history(conv.opts())
    if not h then return nil, err end
    conv.system = context.system(profile())
    tai.chat_reset(conv.opts())
    if #h > 0 then tai.chat_restore(h, conv.opts()) end
    return true
  end

  function conv.history()
    return tai.chat_history(conv.opts())
  end

  function conv.resume(c)
    if not conv.system then conv.system = context.system(profile()) end
    local ok, err = tai.chat_restore(c.messages or {}, conv.opts())
    if not ok then return nil, err end
    conv.id, conv.title, conv.turns = c.id, c.title, c.turns
    -- resuming is using it: tai -c continues the one used last here
    if c.id then tai.conversations.use(c.id, tai.cwd()) end
    return true
  end

  function conv.latest()
    local list = tai.conversations.list(1, tai.cwd())
    if list and list[1] then return tai.conversations.get(list[1].id) end
    return nil
  end

  function conv.save()
    local h, herr = conv.history()
    if not h then return nil, "the conversation was not kept: " .. tostring(herr) end
    if #h == 0 then return true end
    if not conv.title then
      for _, m in ipairs(h) do
        if m.role == "user" and m.content then
          conv.title = M.short(m.content:match("^%s*([^\n]*)") or "", 120)
          break
        end
      end
    end
    local id, err = tai.conversations.save{ id = conv.id, dir = tai.cwd(), title = conv.title,
      profile = tai.profile, turns = conv.turns, messages = h }
    if not id then return nil, "the conversation was not kept: " .. tostring(err) end
    conv.id = id
    return true
  end

  function conv.message(text)
    if not conv.title and text:match("%S") then
      conv.title = M.short(text:match("^%s*([^\n]*)") or "", 120)
    end
    if #conv.notes == 0 then return text end
    local out = table.concat(conv.notes, "\n\n") .. "\n\n" .. text
    conv.notes = {}
    return out
  end

  function conv.count(d, not_a_turn)
    local u = d and d.usage or {}
    conv.usage.input = conv.usage.input + (u.input_tokens or 0)
    conv.usage.output = conv.usage.output + (u.output_tokens or 0)
    if not not_a_turn then conv.usage.turns = conv.usage.turns + 1 end
    if M.unreported(d) then conv.usage.unreported = (conv.usage.unreported or 0) + 1 end
  end

  -- turned() counts a turn of the conversation (kept with it).
  function conv.turned()
    conv.turns = (conv.turns or 0) + 1
  end

  return conv
end

-- thousands(n) renders a count with thousands separators: 12,345.
---@param n integer
---@return string
function M.thousands(n)
  local s = tostring(math.floor(n or 0))
  local out = s:reverse():gsub("(%d%d%d)", "%1,"):reverse()
  return (out:gsub("^,", ""))
end

-- usage_line(d, total) is the line shown after a turn: the turn's tokens
-- from the API's usage fields and the running total of the session.
-- A turn whose usage the provider did not report (no usage fields, or
-- zeros: no request is free) says so instead of counting zeros.
---@param d table
---@param total table
---@return string
function M.usage_line(d, total)
  local u = d and d.usage or {}
  local turn = string.format("%s in · %s out", M.thousands(u.input_tokens), M.thousands(u.output_tokens))
  if M.unreported(d) then turn = "usage not reported" end
  if total.input == 0 and total.output == 0 then
    return M.unreported(d) and turn .. " by the provider" or turn
  end
  return string.format("%s · session %s in · %s out", turn, M.thousands(total.input), M.thousands(total.output))
end

-- unreported(d) says whether the provider reported no usage for a turn
-- (tai.chat's details).
---@param d table
---@return boolean
function M.unreported(d)
  local u = d and d.usage or {}
  return (u.input_tokens or 0) == 0 and (u.output_tokens or 0) == 0
end

-- env_key() names the provider key set in the environment, or nil.
---@return string|nil
function M.env_key()
  for _, p in ipairs(tai.profiles.providers()) do
    local k = p.key_env
    if k and k ~= "" and (os.getenv(k) or "") ~= "" then return k end
  end
end

-- env_advice() says how to have the provider key set in the environment
-- answer instead of the profile in use: a profile named "default" kept in
-- the vault wins over the environment, so then it must go first.
---@return string
function M.env_advice()
  local ok, list = pcall(tai.profiles.list)
  for _, p in ipairs(ok and list or {}) do
    if p.name == "default" and p.stored then
      return "a profile named \"default\" is kept in the vault, and it wins over the environment until it is deleted (/profile delete default)"
    end
  end
  return "tai --profile default uses that, and /profile use default makes it the current profile"
end

-- env_note(chosen) is what tai -p says once on stderr when a profile
-- other than the environment's answered while OPENAI_API_KEY or
-- ANTHROPIC_API_KEY is set; nil when the environment's answered, when no
-- key is set, or when the profile was chosen with --profile (chosen).
---@param chosen? string
---@return string|nil
function M.env_note(chosen)
  if chosen and chosen ~= "" then return nil end
  local env_key = M.env_key()
  if not env_key then return nil end
  local ok, list = pcall(tai.profiles.list)
  local cur
  for _, p in ipairs(ok and list or {}) do
    if p.current then cur = p end
  end
  if not cur or (cur.name == "default" and not cur.stored) then return nil end
  return string.format("tai: profile %q answered (the current one, %s), not the %s set in the environment; %s",
    cur.name, cur.stored and "kept in the vault" or "built in", env_key, M.env_advice())
end

-- profile_hint(err) adds to a failed turn's error which profile is in
-- use and how to switch, so a stored profile never wins silently.
---@param err string
---@return string
function M.profile_hint(err)
  if err == "interrupted" then return err end
  local s = tostring(err)
  -- an error about the vault is no profile's; the advice on setting up a
  -- model says all there is to say
  if s:find("vault", 1, true) or s:find("passphrase", 1, true) then return s end
  local env_key = M.env_key()
  if not env_key and s:find("no model is configured", 1, true) then return s end
  local ok, p = pcall(tai.profiles.current)
  local name = ok and p and p.name or tai.profile
  local hint = string.format("(the profile in use is %q", name)
  if env_key and name ~= "default" and s:find("no model is configured", 1, true) then
    -- the advice to set the key the person has set would mislead
    local why = s:match("\n(%(local Ollama[^\n]*%))") or ""
    s = string.format("profile %q has no model to talk to %s", name, why)
  end
  if ok and p and p.provider == "ollama" and name == "ollama" then
    hint = hint .. ": a local Ollama at 127.0.0.1:11434" .. (env_key and "" or ", used because no OPENAI_API_KEY or ANTHROPIC_API_KEY is set")
  end
  if env_key and name ~= "default" then
    hint = hint .. "; it wins over the " .. env_key .. " set in the environment: " .. M.env_advice()
  else
    hint = hint .. "; /profiles lists the others, /profile use NAME switches, tai --profile NAME picks one for a run"
  end
  return s .. "\n" .. hint .. ")"
end

-- oneshot(prompt [, inv]) runs tai -p: one turn, the answer streamed to
-- stdout, tool lines (and a spinner on a terminal) on stderr. Piped stdin
-- is added to the message as context. Known secrets are redacted from the
-- message and the answer. With inv.continue (tai -c -p) the turn goes on
-- from the last conversation kept in this folder; either way the
-- conversation is kept. Returns the exit status: 1 when the turn failed
-- or its answer is incomplete (the notice goes to stderr).
-- sandbox_notice() is what tai says once at start where no sandbox can
-- run (nil where one can): servers and shell commands then run as they
-- would without it, and entries that require it do not start.
---@return string|nil
function M.sandbox_notice()
  local abi, why = tai.sandbox.available()
  if abi then return nil end
  return "no sandbox on this system (" .. M.clean(tostring(why)) .. "): MCP servers and shell commands run with all of your rights;" ..
    " a server whose entry says sandbox = \"required\" is not started"
end

---@param prompt string
---@param inv table
---@return integer
function M.oneshot(prompt, inv)
  inv = inv or {}
  local notice = M.sandbox_notice()
  if notice then tai.term.warn("tai: " .. notice) end
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
  local conv = M.conversation()
  conv.start()
  if inv.continue then
    local c, err = conv.latest()
    if c then
      local ok, rerr = conv.resume(c)
      if not ok then
        tai.term.warn("tai: the last conversation cannot be continued: " .. tostring(rerr))
        return 1
      end
    elseif err then
      tai.term.warn("tai: " .. tostring(err))
      return 1
    else
      tai.term.warn("tai: no earlier conversation in this folder; starting a new one")
    end
  end
  message = M.redacted(message)
  local view = M.new({ write = tai.term.write, note = tai.term.ewrite, spinner = tai.term.isatty("stderr"),
    redactor = tai.vault.redactor(), retry_lines = true, retry_prefix = "tai: ", width = tai.term.width("stderr") })
  local rl
  -- Questions are asked on the terminal: stdin when it is one, else
  -- /dev/tty (cmd | tai -p …); with neither, the Go side refuses them,
  -- saying so.
  if not tai.term.isatty("stdin") or tai.term.isatty("stderr") then
    local function get_rl()
      rl = rl or tai.term.readline({ output = "stderr" })
      return rl
    end
    -- the question starts on a line of its own, after the tool line
    tai.prompter(M.prompter(get_rl, function(s) tai.term.ewrite(s .. "\n") end, view.before_question))
  end
  -- Ctrl-C stops the turn here, so the spinner's line is cleared and the
  -- conversation kept before tai exits with status 130
  local opts = view.opts(conv.opts())
  opts.tool_budget = M.tool_budget()
  local ok, answer, d = tai.term.protect(tai.chat, message, opts)
  conv.turned()
  view.finish()
  tai.prompter(nil)
  if rl then rl:close() end
  -- a first turn that failed (no model, say) starts no conversation
  local function save()
    local saved, serr = conv.save()
    if not saved then tai.term.warn("tai: " .. M.clean(tostring(serr))) end
  end
  if not ok then
    if conv.id or tostring(answer):find("interrupted", 1, true) then save() end
    tai.term.warn("tai: " .. M.clean(tostring(answer):match("^[^\n]*")))
    return tostring(answer):find("interrupted", 1, true) and 130 or 1
  end
  if answer or d == "interrupted" or conv.id then save() end
  if not answer then
    tai.term.warn("tai: " .. M.clean(M.redacted(M.profile_hint(d))))
    return d == "interrupted" and 130 or 1
  end
  local note = M.env_note(inv.profile)
  if note then tai.term.warn(M.clean(note)) end
  local notes = M.notices(d)
  for _, n in ipairs(notes) do tai.term.warn("tai: " .. n) end
  if #notes > 0 then return 1 end
  return 0
end

return M
