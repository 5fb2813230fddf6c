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

-- clean(s) makes text from the model, a tool or a server safe to show:
-- terminal control sequences, carriage returns and bidi overrides are
-- rendered visibly (\x1b, \x0d, \u202e) instead of acting on the screen.
-- Newlines and tabs are kept.
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

-- short(v, n) renders a value on one line, at most n characters.
function M.short(v, n)
  local s
  if type(v) == "table" then
    s = tai.json.encode(v) or "{…}"
  else
    s = tostring(v)
  end
  s = M.clean(s):gsub("%s+", " ")
  return cut(s, n)
end

-- args_line(args) renders arguments as k=v pairs, sorted, each shortened.
function M.args_line(args)
  local keys = {}
  for k in pairs(args or {}) do keys[#keys + 1] = tostring(k) end
  table.sort(keys)
  local parts = {}
  for _, k in ipairs(keys) do parts[#parts + 1] = M.short(k, 40) .. "=" .. M.short(args[k], 40) end
  return cut(table.concat(parts, " "), 120)
end

-- tool_line(ev) is the start of the line shown when a tool is called.
function M.tool_line(ev)
  local a = M.args_line(ev.args)
  local name = M.short(ev.name, 80)
  if a == "" then return "⚙ " .. name end
  return "⚙ " .. name .. " " .. a
end

-- duration(ms) renders a duration.
function M.duration(ms)
  if ms < 1000 then return string.format("%d ms", math.floor(ms + 0.5)) end
  return string.format("%.1f s", ms / 1000)
end

-- retry_text(n) is how a retry of the model request is shown, from
-- tai.chat's on_retry notice: "rate limited (429); retrying in 30s,
-- attempt 2/4".
function M.retry_text(n)
  return M.short(n.text or n.reason or "retrying", 160)
end

-- new(o) returns a view of one turn: o.write(s) prints the answer,
-- o.note(s) prints tool lines and the spinner (may be the same stream),
-- o.spinner says whether to animate, o.redactor (from tai.vault.redactor())
-- redacts the answer as it streams. A retry of the model request (rate
-- limit, server error) is shown as the spinner's text when animating,
-- else (or with o.retry_lines) as a line of its own: o.retry_prefix ..
-- text. Everything the model sends is shown through M.clean.
-- view.opts(extra) gives tai.chat's options; view.finish() ends the last
-- line.
function M.new(o)
  local view = { at_start = true, open = nil }
  local same = o.note == o.write
  local red = o.redactor

  -- show(s) prints answer text, ending a spinner or an open tool line.
  local function show(s)
    view.status = nil
    if view.spinning then
      o.note("\r\27[K")
      view.spinning = false
    end
    if view.open then
      o.note("\n")
      view.open = nil
    end
    if s == "" then return end
    o.write(M.clean(s))
    view.at_start = s:sub(-1) == "\n"
  end

  -- flush() shows the answer text the redactor still holds.
  local function flush()
    if red then
      local rest = red:flush()
      if rest ~= "" then show(rest) end
    end
  end

  -- newline() ends a partly written line of either kind.
  function view.newline()
    flush()
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
    if red then s = red:push(s) end
    show(s)
  end

  -- spin(tick) draws the spinner with its status: "thinking…", or the
  -- retry being waited for.
  local function spin(tick)
    if not view.at_start and same then o.write("\n") view.at_start = true end
    if view.open then o.note("\n") view.open = nil end
    o.note("\r" .. M.frames[(tick or 0) % #M.frames + 1] .. " " .. (view.status or "thinking…") .. "\27[K")
    view.spinning = true
  end

  local function waiting(on, tick)
    if not o.spinner then return end
    if on then
      spin(tick)
    else
      view.status = nil
      if view.spinning then
        o.note("\r\27[K")
        view.spinning = false
      end
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
    local mark = (M.marks[ev.outcome] or M.short(ev.outcome, 40)) .. " " .. M.duration(ev.duration_ms or 0)
    if view.spinning then
      o.note("\r\27[K")
      view.spinning = false
    end
    if view.open == ev.id then
      o.note(" " .. mark .. "\n")
    else
      if view.open then o.note("\n") end
      o.note("  " .. M.short(ev.name, 80) .. " " .. mark .. "\n")
    end
    view.open = nil
  end

  function view.opts(extra)
    local t = { on_text = text, on_waiting = waiting, on_tool_start = tool_start, on_tool_end = tool_end,
      on_retry = retry }
    for k, v in pairs(extra or {}) do t[k] = v end
    return t
  end

  function view.finish()
    flush()
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
  if c.origin and c.origin ~= "" then where = " (" .. M.short(c.origin, 80) .. ")" end
  return string.format("⚠ %s%s wants to run · args %s", M.short(c.tool, 80), where, M.short(c.digest or "", 40))
end

-- full_args(c) renders the arguments in full, one per line; the further
-- lines of a multi-line value are indented under it, so they cannot pass
-- for arguments of their own.
function M.full_args(c)
  local keys = {}
  for k in pairs(c.args or {}) do keys[#keys + 1] = tostring(k) end
  table.sort(keys)
  local lines = {}
  for _, k in ipairs(keys) do
    local v = c.args[k]
    if type(v) == "table" then v = tai.json.encode(v) end
    local shown = M.clean(tostring(v)):gsub("\n", "\n      │ ")
    lines[#lines + 1] = "  " .. tai.term.clean(k, true) .. " = " .. shown
  end
  if #lines == 0 then return "  (no arguments)" end
  return table.concat(lines, "\n")
end

-- prompter(get_rl, say [, before]) returns the consent and question
-- functions for tai.prompter, asking through the readline handle get_rl()
-- returns: y runs the call, n (or Enter, Ctrl-D) refuses it, a shows the
-- arguments in full and asks again; Ctrl-C refuses it and cancels the
-- whole turn. say(line) prints; before() runs first (to end a partly
-- written line).
function M.prompter(get_rl, say, before)
  local function confirm(c)
    if before then before() end
    say(M.consent_text(c))
    while true do
      local line, err = get_rl():read("  allow? [y]es / [n]o / [a]rguments: ")
      if not line then
        if err == "interrupt" then tai.term.interrupt() end
        return false
      end
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
    say("? " .. M.clean(q))
    local line, err = get_rl():read("answer> ")
    if not line then
      if err == "interrupt" then tai.term.interrupt() end
      return nil, err
    end
    return line
  end
  return { confirm = confirm, ask = ask }
end

-- notices(d) lists what the person must be told about how a turn ended,
-- from tai.chat's details: the step limit ran out, the model's output
-- limit cut the answer short, the provider withheld or the model refused
-- the answer, or the answer was empty. Each means the answer is not
-- complete.
function M.notices(d)
  local out = {}
  if not d then return out end
  if d.exhausted then
    out[#out + 1] = "the turn stopped at the step limit before the model gave a final answer; " ..
      "ask again to continue, or give the turn more steps (tai.chat max_steps)"
  end
  if d.truncated or d.finish_reason == "length" then
    out[#out + 1] = "the answer was cut off at the model's output limit (finish reason \"length\"); " ..
      "raise max_tokens in the profile or ask for a shorter answer"
  end
  if d.filtered or d.finish_reason == "content_filter" then
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
function M.redacted(text)
  local out, err = tai.vault.redact(text)
  if not out then return text, err end
  return out
end

-- oneshot(prompt) runs tai -p: one turn, the answer streamed to stdout,
-- tool lines (and a spinner on a terminal) on stderr. Piped stdin is added
-- to the message as context. Known secrets are redacted from the message
-- and the answer. Returns the exit status: 1 when the turn failed or its
-- answer is incomplete (the notice goes to stderr).
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
  message = M.redacted(message)
  local view = M.new({ write = tai.term.write, note = tai.term.ewrite, spinner = tai.term.isatty("stderr"),
    redactor = tai.vault.redactor(), retry_lines = true, retry_prefix = "tai: " })
  local answer, d = tai.chat(message, view.opts())
  view.finish()
  tai.prompter(nil)
  if rl then rl:close() end
  if not answer then
    tai.term.warn("tai: " .. M.clean(M.redacted(tostring(d))))
    return 1
  end
  local notes = M.notices(d)
  for _, n in ipairs(notes) do tai.term.warn("tai: " .. n) end
  if #notes > 0 then return 1 end
  return 0
end

return M
