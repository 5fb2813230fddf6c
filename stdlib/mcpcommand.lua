-- mcpcommand.lua (tai.mcpcommand): the REPL's /mcp command over tai.mcp
-- (the registered MCP servers). repl.lua installs it; a user's own
-- lua/tai/mcpcommand.lua replaces it.
--   local mcp = require("tai.mcpcommand")
--   mcp.install()          -- adds /mcp (unless init.lua defined one)
--   mcp.offer(text)        -- offers to add the servers a pasted config holds
local tai = require("tai")

local M = {}

local function repl() return require("tai.repl") end
local function say(text) repl().say(text) end
local function warn(text) repl().warn(text) end
local function clean(s) return tai.term.clean(tostring(s)) end

M.subcommands = { "add", "normalize", "list", "enable", "disable", "remove", "tools", "resources", "call", "grant", "allow", "import", "login", "log" }

-- log_levels are the levels /mcp log takes, least severe first.
M.log_levels = { "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency" }

-- count(n, word) is "1 tool", "2 tools".
local function count(n, word)
  return n .. " " .. word .. (n == 1 and "" or "s")
end

-- granted_text(granted) names what /mcp grant granted: the first ten,
-- then how many more.
---@param granted string[]
---@return string
function M.granted_text(granted)
  local names = {}
  for i, g in ipairs(granted) do
    if i > 10 then names[#names + 1] = string.format("and %d more", #granted - 10) break end
    names[#names + 1] = clean(g)
  end
  return table.concat(names, ", ")
end

-- report(rep [, notes_shown]) shows what an add or an import did with each
-- server, and the notes unless they were shown already.
---@param rep table
---@param notes_shown? boolean
function M.report(rep, notes_shown)
  for _, s in ipairs(rep.servers or {}) do
    if s.outcome == tai.outcome.ADDED then
      local state = s.enabled and ("enabled for profile " .. s.profile .. ": the model has its tools from the next message")
        or ("stored disabled; /mcp enable " .. s.server .. " offers its tools to profile " .. s.profile)
      if s.needs_login then
        state = "stored disabled: it needs an OAuth login (HTTP 401); /mcp login " .. s.server .. " logs in and enables it"
      end
      say(string.format("added %s (%s), %s", clean(s.server), s.transport, state))
      if s.consent == "auto" then
        say("  started under --auto without asking:")
        say((require("tai.consent").body(s.spawn):gsub("\n$", "")))
      end
      if s.found and s.found ~= "" then say("  " .. clean(s.found)) end
      if not s.needs_login then
        say("  " .. count(#(s.tools or {}), "tool") .. ": " .. tai.term.clean(table.concat(s.tools or {}, ", "), true))
      end
      if s.prompts and #s.prompts > 0 then
        say("  " .. count(#s.prompts, "prompt") .. ", run as /" .. clean(s.server) .. ":PROMPT: " .. tai.term.clean(table.concat(s.prompts, ", "), true))
      end
      if s.instructions and s.instructions ~= "" then
        -- pinned with the tools; the model gets them in its system prompt.
        -- The fold's markers, and tai's own line where it cut them, say
        -- all that is left out: no note beside them.
        say("  instructions for the model (pinned; /context shows them):")
        local shown = tai.term.fold(s.instructions, 4, 400)
        for line in (shown .. "\n"):gmatch("([^\n]*)\n") do say("    " .. line) end
      end
      for _, n in ipairs(s.notes or {}) do warn("  " .. clean(n)) end
    elseif s.outcome == tai.outcome.SKIPPED then
      say(string.format("skipped %s: %s", clean(s.server), clean(s.reason)))
    elseif s.declined then
      say(string.format("not added: %s (you said no; nothing was started)", clean(s.server)))
    else
      warn(string.format("refused %s: %s", clean(s.server), clean(s.reason)))
    end
  end
  for _, n in ipairs(notes_shown and {} or rep.notes or {}) do
    local who = (n.server and n.server ~= "") and (n.server .. ": ") or ""
    say(string.format("  note (%s): %s%s", n.level, clean(who), clean(n.text)))
  end
end

-- is_url(s) says whether s is one http(s) URL and nothing else.
---@param s any
---@return boolean
function M.is_url(s)
  return s:match("^%s*[hH][tT][tT][pP][sS]?://%S+%s*$") ~= nil
end

-- pasted_server(line) says whether a line typed or pasted at the prompt
-- names an MCP server rather than a message for the model: a claude,
-- codex or gemini "mcp add" command line, or one URL that reads as a
-- server's address (its path ends in /mcp or /sse, or its host starts
-- with mcp.).
---@param line string
---@return boolean
function M.pasted_server(line)
  local t = line:gsub("^%s*%$?%s*", "")
  for _, cli in ipairs({ "claude", "codex", "gemini" }) do
    if t:match("^" .. cli .. "[ \t]+mcp[ \t]+add[ \t]") then return true end
  end
  if not M.is_url(line) then return false end
  local authority, path = line:match("^%s*%a+://([^/?#%s]+)([^?#%s]*)")
  path = (path or ""):lower():gsub("/+$", "")
  return path:match("/mcp$") ~= nil or path:match("/sse$") ~= nil or (authority or ""):lower():match("^mcp%.") ~= nil
end

-- source_text(source) is the config text /mcp add was given: the text
-- itself, or a config file's contents and then the file's path; nil for a
-- stored server's name.
---@param source string
---@return string|nil
---@return string|nil
function M.source_text(source)
  if source:find("[\n{}%[%]=\"]") or M.is_url(source) then return source end
  if tai.file_kind(source) == "file" then
    local text = tai.read_text(source)
    if text then return text, source end
  end
  return nil
end

-- command_name(words) names the server a bare command line starts: its
-- package or script, less a scope, a version, an extension and the words
-- mcp and server (npx -y @modelcontextprotocol/server-filesystem . gives
-- filesystem); nil when no word reads as one.
---@param words string[]
---@return string|nil
function M.command_name(words)
  local skip = { run = true, exec = true, x = true, dlx = true, tool = true, ["--from"] = true }
  for i = 2, #words do
    local w = words[i]
    if not w:match("^%-") and not skip[w] then
      local base = w:gsub("^@[^/]+/", ""):gsub("(.)@[^/]*$", "%1")
      base = (base:match("([^/]+)/*$") or base):gsub("%.[%a]+$", "")
      base = base:lower():gsub("^mcp[-_]server[-_]", ""):gsub("^server[-_]", ""):gsub("[-_]mcp[-_]server$", "")
        :gsub("[-_]mcp$", ""):gsub("^mcp[-_]", "")
      if base:match("^[%w][%w_-]*$") then return base end
    end
  end
  return nil
end

-- command_line(source) is the claude mcp add line for what /mcp add was
-- given as a command to run, as Claude Code takes it: NAME [flags] --
-- COMMAND ARGS…, or a bare COMMAND ARGS… named after its package. nil
-- when source is a config, a file, a URL or a stored server's name.
---@param source string
---@return string|nil
function M.command_line(source)
  if source:find("[\n{}%[%]\"]") or M.is_url(source) or M.pasted_server(source) or M.github(source) then return nil end
  if not source:find("%s") or tai.file_kind(source) then return nil end
  if source:find("%s%-%-%s") then return "claude mcp add " .. source end
  local words = {}
  for w in source:gmatch("%S+") do words[#words + 1] = w end
  if tai.file_kind(words[1]) == "dir" then return nil end
  local name = M.command_name(words)
  if not name then return nil end
  return "claude mcp add " .. name .. " -- " .. source
end

-- github(source) is what tai.mcp.github makes of source: nil when it is
-- not a GitHub URL, else {repo=} (the repository it names) or {bad=} (why
-- it names none). A paste is read once and this passed along.
---@param source string
---@return table|nil
function M.github(source)
  local repo, bad = tai.mcp.github(source)
  if repo or bad then return { repo = repo, bad = bad } end
  return nil
end

-- add_and_report(args, shown) calls tai.mcp.add(args) and reports what
-- became of each server (its notes unless shown already), then offers the
-- logins the servers need.
local function add_and_report(args, shown)
  local rep, err = tai.mcp.add(args)
  if not rep then warn(clean(err)) return end
  M.report(rep, shown)
  M.offer_login(rep)
  for _, s in ipairs(rep.servers or {}) do
    if s.outcome == tai.outcome.SKIPPED and s.reason == "already registered" and not args.replace then
      M.offer_existing(s.server, args)
    end
  end
end

-- words_of(e) is an entry's argv, or its URL, as words.
local function words_of(e)
  if e.url and e.url ~= "" then return { e.url } end
  local w = { e.command }
  for _, a in ipairs(e.args or {}) do w[#w + 1] = a end
  return w
end

-- new_entry(source, name) is the entry named name that source holds (a
-- GitHub repository as the resolver reads it, else a paste as the
-- normalizer does).
---@param source string
---@param name string
---@return table|nil
function M.new_entry(source, name)
  local gh = M.github(source)
  if gh and gh.repo then
    local res = tai.mcp.resolve(source)
    return res and res.entry
  end
  local text = M.source_text(source)
  local entries = text and tai.mcp.normalize(text, nil)
  for _, e in ipairs(entries or {}) do
    if e.name == name then return e end
  end
  return nil
end

-- offer_existing(name, args) is what an add of a server already
-- registered under name offers at the REPL: the difference between the
-- stored entry and the new one, then u (update the stored entry to it)
-- or r (add it under another name).
---@param name string
---@param args table
function M.offer_existing(name, args)
  if not tai.term.isatty() then return end
  local new = M.new_entry(args.source, name)
  if not new then return end
  local old
  for _, s in ipairs(tai.mcp.list() or {}) do
    if s.name == name then old = s end
  end
  local before, after = table.concat(old and old.words or {}, " "), table.concat(words_of(new), " ")
  if before == after then
    say("  the stored " .. clean(name) .. " runs the same; r adds it under another name")
  else
    say("  stored:  " .. clean(before))
    say("  new:     " .. clean(after))
  end
  local a = require("tai.chatview").choose(repl().rl, "u: update the stored entry to the new one, r: add it under another name [u/r/N] ", { "n", "u", "r" })
  if a == "u" then
    add_and_report({ source = args.source, name = args.name, profile = args.profile, replace = true }, true)
  elseif a == "r" then
    local other = repl().rl:read("name for the new server: ")
    other = other and other:match("^%s*([%w_.-]+)%s*$")
    if not other then say("(not added: a name is letters, digits, '.', '_' or '-')") return end
    local source = args.source
    local gh = M.github(source)
    if not (gh and gh.repo) then
      -- a paste names its own servers: the one entry, under the new name
      new.name = nil
      source = tai.json.encode({ mcpServers = { [other] = { command = new.command, args = new.args, env = new.env, url = new.url, headers = new.headers, type = new.transport == "http" and "http" or nil } } })
    end
    add_and_report({ source = source, name = other, profile = args.profile }, true)
  else
    say("(left as it is)")
  end
end

-- add(source [, name [, preview [, gh]]]) registers what source holds (a
-- config, a file, a name). With preview, a config or file is first shown
-- as the normalizer reads it, warnings included, before any start is
-- asked for; a GitHub repository as the resolver reads it. gh is
-- M.github(source) when the caller has it already.
---@param source string
---@param name? string
---@param preview? boolean
---@param gh? table
function M.add(source, name, preview, gh)
  local shown = false
  if preview then gh = gh or M.github(source) end
  if preview and gh and gh.repo then
    local ok, picked = M.show_resolved(source, gh, M.asks_itself())
    if not ok then return end
    source = picked or source
    preview, shown = false, true
  end
  if preview then
    local text, path = M.source_text(source)
    local entries, notes
    if text then entries, notes = tai.mcp.normalize(text, name) end
    if entries and #entries > 0 then
      -- what was given: a file, a URL, a command line or a config typed
      -- after /mcp add (a paste offered by itself is "the paste")
      local what = path or (M.is_url(source) and "the URL") or (not source:find("\n", 1, true) and "the line") or "the config"
      M.show(entries, notes, what, M.asks_itself())
      shown = true
    end
  end
  add_and_report({ source = source, name = name }, shown)
end

-- offer_login(rep) offers, for each server an add stored because it
-- answered 401, to log in now (/mcp login), which enables it.
---@param rep table
function M.offer_login(rep)
  if not tai.term.isatty() then return end
  for _, s in ipairs(rep.servers or {}) do
    if s.outcome == tai.outcome.ADDED and s.needs_login then
      if require("tai.chatview").confirm(repl().rl, "log in to " .. clean(s.server) .. " now, in your browser? [y/N] ") then
        M.login({ "login", s.server })
      else
        say("(not logged in; /mcp login " .. clean(s.server) .. " does it later)")
      end
    end
  end
end

-- show_resolved(url, gh [, brief]) shows the entry the resolver finds in
-- the GitHub repository url names (gh is M.github(url)), where it found it
-- and its notes (brief: see show); false when it found none. A repository
-- of several servers lists them and asks for one by number, resolved at
-- once: then true and the URL picked.
---@param url string
---@param gh table
---@param brief? boolean
---@return boolean
---@return string|nil
function M.show_resolved(url, gh, brief)
  if gh.bad then warn(clean(gh.bad)) return false end
  say("reading " .. clean(url) .. " …")
  local res, err, servers = tai.mcp.resolve(url)
  if not res and type(servers) == "table" and #servers > 0 and tai.term.isatty() then
    for line in tostring(err):gmatch("[^\n]+") do say(clean(line)) end
    local pick = M.pick(servers)
    if not pick then say("(none picked; nothing stored)") return false end
    local pgh = M.github(pick)
    if pgh and pgh.repo then
      local ok = M.show_resolved(pick, pgh, brief)
      return ok, pick
    end
    local entries, notes = tai.mcp.normalize(pick)
    if not entries or #entries == 0 then warn(clean(notes)) return false end
    M.show(entries, notes, nil, brief)
    return true, pick
  end
  if not res then warn(clean(err)) return false end
  say(clean(res.origin))
  M.show({ res.entry }, res.notes, gh.repo and gh.repo.url, brief)
  return true, url
end

-- pick(servers) asks for one of a repository's servers by its number:
-- its URL, or nil for none.
---@param servers {url: string}[]
---@return string|nil
function M.pick(servers)
  while true do
    local line = repl().rl:read(string.format("which one (1-%d, Enter for none)? ", #servers))
    if not line then return nil end
    line = line:match("^%s*(.-)%s*$")
    if line == "" then return nil end
    local k = tonumber(line)
    if k and servers[k] then return servers[k].url end
    say(string.format("  answer a number from 1 to %d, or Enter for none", #servers))
  end
end

-- asks_itself() says whether tai.mcp.add puts its own question (the
-- consent screen, with the choice to enable) to the person: in
-- interactive mode. Under --auto and --yolo it starts servers without
-- asking, so a paste is first confirmed here.
---@return boolean
function M.asks_itself()
  return tai.mode == "interactive"
end

-- offer_github(url [, gh]) is what a GitHub URL pasted at the prompt
-- does: show what the resolver finds and, when the person agrees on the
-- consent screen, add it. gh is M.github(url) when the caller has it.
---@param url string
---@param gh? table
---@return nil
function M.offer_github(url, gh)
  gh = gh or M.github(url) or {}
  if M.asks_itself() then return M.add(url, nil, true, gh) end
  local ok, picked = M.show_resolved(url, gh)
  if not ok then return end
  url = picked or url
  if not require("tai.chatview").confirm(repl().rl, "add it to tai (you see the command before it runs)? [y/N] ") then
    say("(not added; /mcp add " .. clean(gh.repo and gh.repo.url or url) .. " adds it)")
    return
  end
  M.add(url)
end

-- read_paste() reads a pasted config after /mcp add: JSON until its braces
-- balance, TOML until a blank line.
---@return string|nil
function M.read_paste()
  local r = repl()
  say("paste the server config (JSON or TOML); a blank line ends it")
  local first, err = r.rl:read(r.continuation)
  if not first then
    if err == "interrupt" then return nil end
    return nil
  end
  if first:find("\n", 1, true) then return first end -- a bracketed paste arrives whole
  local kind = r.block_kind(first) or "toml"
  local done = function() return false end
  if kind ~= "toml" then
    local depth = 0
    done = function(line)
      for c in line:gmatch("[{}%[%]]") do
        if c == "{" or c == "[" then depth = depth + 1 else depth = depth - 1 end
      end
      return depth <= 0
    end
  end
  local lines = r.read_lines(first, done)
  if not lines then return nil end
  return table.concat(lines, "\n")
end

-- show(entries, notes [, path [, brief]]) shows what tai.mcp.normalize
-- made of a paste (or of the file at path), as mcpview lays it out; brief
-- when the consent screen follows, which shows what will run in full.
---@param entries table[]
---@param notes? table[]
---@param path? string
---@param brief? boolean
function M.show(entries, notes, path, brief)
  local view = require("tai.mcpview")
  say(clean(view.summary(entries, notes, path)))
  for _, l in ipairs(view.lines(entries, notes, brief)) do say(clean(l)) end
end

-- offer(text) is what a pasted config block (a JSON or TOML config, a
-- claude|codex|gemini mcp add line, a server's URL) does: show each server
-- as the normalizer reads it, then add them; the consent screen of each
-- is the one question (under --auto and --yolo, which start servers
-- without asking, the paste is confirmed first).
---@param text string
function M.offer(text)
  local entries, notes = tai.mcp.normalize(text)
  if not entries then
    warn(clean(notes))
    return
  end
  M.show(entries, notes, not text:find("\n", 1, true) and "the line" or nil, M.asks_itself())
  if #entries == 0 then
    warn("the paste holds no server tai can add")
    return
  end
  if not M.asks_itself() then
    if not require("tai.chatview").confirm(repl().rl, "add them to tai (they start without asking: --" .. tai.mode .. ")? [y/N] ") then
      say("(not added; /mcp add pastes again)")
      return
    end
  end
  add_and_report({ source = text }, true)
end

-- normalize(source) shows what a paste would register, storing nothing.
---@param source string
function M.normalize(source)
  local gh = M.github(source)
  if gh and gh.repo then
    if M.show_resolved(source, gh) then say("(nothing stored; /mcp add stores it)") end
    return
  end
  local entries, notes = tai.mcp.normalize(source)
  if not entries then warn(clean(notes)) return end
  M.show(entries, notes)
  say("(nothing stored; /mcp add stores them)")
end

-- command_lines(words, width) is a command line as /mcp shows it: its
-- words rendered visibly and shell-quoted (tai.term.words), as many on a
-- line as fit in width columns (80 when width is not positive).
---@param words string[]
---@param width integer
---@return string[]
function M.command_lines(words, width)
  if width <= 0 then width = 80 end
  local columns = require("tai.chatview").columns
  local out, line = {}, ""
  for _, w in ipairs(tai.term.words(words, width)) do
    local cont = w:match("^↪ ") ~= nil
    if line ~= "" and (cont or columns(line) + 1 + columns(w) > width) then
      out[#out + 1] = line
      line = ""
    end
    line = line == "" and w or (line .. " " .. w)
  end
  if line ~= "" then out[#out + 1] = line end
  return out
end

-- list_lines(list) is how /mcp shows tai.mcp.list(): each server's name
-- and state, its command line (or its URL) rendered visibly
-- (command_lines), a mark when it puts a secret
-- where other users can read it, its tool counts, and what its sandbox
-- lets it do (a warning when the sandbox is off).
---@param list table[]
---@return string[]
function M.list_lines(list)
  local one = function(v) return tai.term.clean(tostring(v), true) end
  local out = {}
  for _, s in ipairs(list) do
    local here = s.enabled and "enabled" or "disabled"
    out[#out + 1] = string.format("%-16s %-5s %s", one(s.name), one(s.transport), here)
    for _, l in ipairs(M.command_lines(s.words or {}, tai.term.width() - 4)) do out[#out + 1] = "    " .. l end
    if s.host and s.host ~= "" then out[#out + 1] = "  " .. one(s.host) end
    if s.secret_in_argv and #s.secret_in_argv > 0 then
      out[#out + 1] = "  ⚠ secret in argv: " .. one(table.concat(s.secret_in_argv, ", ")) ..
        " is readable by every user of this machine (process list, or the URL's query in server logs); pass it in env (or a header) instead"
    end
    local profiles = #s.profiles > 0 and table.concat(s.profiles, ", ") or "none"
    out[#out + 1] = string.format("  tools %d (granted %d, offered here %d, withheld %d, removed %d); enabled for: %s%s",
      s.tools, s.granted, s.offered, s.withheld, s.removed, one(profiles), s.connected and "; connected" or "")
    if (s.prompts or 0) > 0 then
      out[#out + 1] = string.format("  prompts %d, run as /%s:PROMPT (/help lists them)", s.prompts, one(s.name))
    end
    if s.withholding and s.withholding ~= "" then out[#out + 1] = "  ⚠ instructions " .. one(s.withholding) end
    if s.sandbox_off then
      out[#out + 1] = "  ⚠ sandbox " .. one(s.sandbox) .. " (sandbox = false in its entry)"
    elseif s.unsandboxed then
      out[#out + 1] = "  ⚠ sandbox: " .. one(s.sandbox)
    elseif s.sandbox and s.sandbox ~= "" then
      out[#out + 1] = "  sandbox: " .. one(s.sandbox)
    end
    if s.login and s.login ~= "" then out[#out + 1] = "  OAuth: " .. one(s.login) end
    if s.oauth and s.oauth ~= "" then out[#out + 1] = "  OAuth client: " .. one(s.oauth) end
  end
  return out
end

-- profile_lines(profile) says, after a switch to profile, which MCP
-- servers it has enabled and which are enabled only for other profiles,
-- with the command that enables them here; nothing when none are stored.
---@param profile? string
---@return string[]
function M.profile_lines(profile)
  local list = tai.mcp.list()
  if not list or #list == 0 then return {} end
  local here, elsewhere, off = {}, {}, {}
  for _, s in ipairs(list) do
    local name = tai.term.clean(s.name, true)
    if s.enabled then
      here[#here + 1] = name
    elseif #s.profiles > 0 then
      elsewhere[#elsewhere + 1] = name .. " (" .. tai.term.clean(table.concat(s.profiles, ", "), true) .. ")"
      off[#off + 1] = name
    end
  end
  local out = {}
  local p = tai.term.clean(profile, true)
  if #here > 0 then
    out[#out + 1] = "MCP servers enabled for " .. p .. ": " .. table.concat(here, ", ")
  else
    out[#out + 1] = "no MCP server is enabled for " .. p
  end
  if #elsewhere > 0 then
    out[#out + 1] = "enabled for other profiles only: " .. table.concat(elsewhere, ", ") ..
      "; /mcp enable " .. off[1] .. (#off > 1 and " (and so on)" or "") .. " offers its tools here"
  end
  return out
end

function M.list()
  local list, err = tai.mcp.list()
  if not list then warn(clean(err)) return end
  if #list == 0 then
    say("no MCP servers registered; paste a config or /mcp add")
    return
  end
  for _, l in ipairs(M.list_lines(list)) do
    if l:find("^  ⚠") then say(repl().paint("1;31", l)) else say(l) end
  end
end

---@param server string
function M.tools(server)
  local list, err = tai.mcp.tools({ server = server })
  if not list then warn(clean(err)) return end
  if #list == 0 then say("no tools cached") return end
  for _, t in ipairs(list) do
    local mark = t.offered and "+" or " "
    say(string.format("%s %-40s %s", mark, tai.term.clean(t.name, true), t.state))
    if t.description and t.description ~= "" then
      say("    " .. clean(t.description):gsub("%s+", " "):sub(1, 160))
    end
    if t.reason and t.reason ~= "" then say("    " .. clean(t.reason)) end
  end
end

-- fold_line(text, width) cuts one line into lines of at most width
-- columns (bytes of one character kept together), the later ones indented.
---@param text string
---@param width integer
---@return string[]
function M.fold_line(text, width)
  local out, indent = {}, "      "
  width = math.max(width or 80, 20)
  local function cols(s) return #s:gsub("[\128-\191]", "") end
  while cols(text) > width do
    local cut, n = 0, 0
    for i = 1, #text do
      local b = text:byte(i)
      if b < 128 or b >= 192 then
        if n == width then break end
        n = n + 1
      end
      cut = i
    end
    -- a whole character: take its continuation bytes along
    while cut < #text and text:byte(cut + 1) >= 128 and text:byte(cut + 1) < 192 do cut = cut + 1 end
    out[#out + 1] = text:sub(1, cut)
    text = indent .. text:sub(cut + 1)
  end
  out[#out + 1] = text
  return out
end

local function size_text(n)
  if n >= 1024 * 1024 then return string.format("%.1f MB", n / 1024 / 1024) end
  if n >= 1024 then return string.format("%d KB", math.floor(n / 1024)) end
  return string.format("%d bytes", n)
end

-- clip_words(s, n) is s cut to about n bytes at a blank, with "…" when
-- it was cut (a word cut in two, or a parenthesis opened and not closed,
-- reads as a mistake).
local function clip_words(s, n)
  if #s <= n then return s end
  local cut = s:sub(1, n):match("^(.*%S)%s") or s:sub(1, n)
  cut = cut:gsub("%s*%([^)]*$", "")
  return cut .. " …"
end

-- server_refusal(name, enabled) is what a person is told when /mcp
-- SUB name names no registered server (or, with enabled, one off for
-- this profile); nil when it is there.
local function server_refusal(name, enabled)
  for _, s in ipairs(tai.mcp.list() or {}) do
    if s.name == name then
      if enabled and not s.enabled then
        return string.format("/mcp enable %s first: %s is off for this profile", clean(name), clean(name))
      end
      return nil
    end
  end
  return string.format("no MCP server is named %s: /mcp lists them", clean(name))
end

-- list_of(v) is v when it is a table, else an empty list (JSON null,
-- tai.json.null, is truthy but has no length).
local function list_of(v)
  if type(v) == "table" then return v end
  return {}
end

-- resources_shown caps the resources (and the templates) /mcp resources
-- shows; the model's mcp_resources pages through them all.
M.resources_shown = 500

-- resource_lines(list, width) shows a server's resources for a person: a
-- line each (name, URI, type, size when given), the templates after,
-- folded to width columns, whatever the server put in them made visible;
-- at most resources_shown of each, then how many more there are.
---@param list tai.mcp.ResourceList
---@param width integer
---@return string[]
function M.resource_lines(list, width)
  local out = {}
  local res, tmpl = list_of(list.resources), list_of(list.templates)
  if #res == 0 and #tmpl == 0 then return { clean(list.server) .. " lists no resources" } end
  local function add(name, uri, mime, size)
    local line = "  " .. tai.term.clean(name or "", true) .. "  " .. tai.term.clean(uri, true)
    local meta = {}
    if mime and mime ~= "" then meta[#meta + 1] = tai.term.clean(mime, true) end
    if type(size) == "number" then meta[#meta + 1] = size_text(size) end
    if #meta > 0 then line = line .. "  (" .. table.concat(meta, ", ") .. ")" end
    for _, l in ipairs(M.fold_line(line, width)) do out[#out + 1] = l end
  end
  local function more(n)
    if n > M.resources_shown then
      out[#out + 1] = string.format("  … and %d more (the model's mcp_resources pages through them)", n - M.resources_shown)
    end
  end
  for i = 1, math.min(#res, M.resources_shown) do
    local r = res[i]
    add(r.title or r.name, r.uri, r.mimeType, r.size)
  end
  more(#res)
  if #tmpl > 0 then
    out[#out + 1] = "templates (read with a URI they make):"
    for i = 1, math.min(#tmpl, M.resources_shown) do
      local t = tmpl[i]
      add(t.title or t.name, t.uriTemplate, t.mimeType)
    end
    more(#tmpl)
  end
  if list.more then out[#out + 1] = "(the server lists more; the rest are not shown)" end
  return out
end

---@param server? string
function M.resources(server)
  if not server then warn("usage: /mcp resources SERVER") return end
  local refused = server_refusal(server, true)
  if refused then warn(refused) return end
  local list, err = tai.mcp.resources({ server = server })
  if not list then warn(clean(err)) return end
  for _, l in ipairs(M.resource_lines(list, tai.term.width())) do say(l) end
end

-- enabled_servers() names the servers enabled for the profile.
local function enabled_servers()
  local out = {}
  for _, s in ipairs(tai.mcp.list() or {}) do
    if s.enabled then out[#out + 1] = s.name end
  end
  return out
end

-- attach_resources(text, parts, count) reads the resources a message
-- names with @server:uri (a registered server) into parts, at most count
-- of them, saying a line for each; a mention of no server that looks like
-- a URI is a one-line note. It returns text without those mentions, for
-- the @file pass.
---@param text string
---@param parts string[]
---@param count integer
---@return string
function M.attach_resources(text, parts, count)
  local known
  local rest = ("\n" .. text):gsub("(%s)@([%w_%.%-]+):(%S+)", function(sp, server, uri)
    uri = uri:gsub("[%.,;]+$", "")
    if not known then
      known = {}
      for _, s in ipairs(tai.mcp.list() or {}) do known[s.name] = s end
    end
    local shown = "@" .. clean(server) .. ":" .. tai.term.clean(uri, true)
    if not known[server] then
      if not uri:find("://", 1, true) then return nil end
      say(repl().paint("2", "  (no MCP server " .. clean(server) .. " here: " .. shown .. " is sent as text)"))
      return sp
    end
    if #parts >= count then
      say(repl().paint("2", string.format("  (not attached %s: a message attaches at most %d)", shown, count)))
      return sp
    end
    if not known[server].enabled then
      say(repl().paint("2", string.format("  (/mcp enable %s, then send it again, to read %s: the server is off for this profile; sent as text)", clean(server), shown)))
      return sp
    end
    local r, err = tai.mcp.read({ server = server, uri = uri })
    if not r or r.isError then
      -- a failure names the arguments as <server> and <uri> (the registry
      -- never echoes them); the person typed them, so put them back
      local why = (r and r.text or tostring(err)):match("[^\n]*"):gsub("^mcp_read_resource: ", "")
      why = why:gsub("<server>", function() return server end):gsub("<uri>", function() return uri end)
      say(repl().paint("2", "  (cannot read " .. shown .. ": " .. clip_words(clean(why), 160) .. "; it is sent as text)"))
      return sp
    end
    parts[#parts + 1] = string.format("[Resource %s of MCP server %s:]\n%s", uri, server, r.text)
    say(repl().paint("2", string.format("  (attached %s, %d bytes)", shown, #r.text)))
    return sp
  end)
  return rest:sub(2)
end

-- complete_mention(word) completes "@na" to the enabled servers as
-- "@name:" and "@name:pre" to the URIs the server lists (listed quietly:
-- a server that would need consent to start offers none); nil when word
-- names no server.
---@param word string
---@return string[]
function M.complete_mention(word)
  local server, prefix = word:match("^@([%w_%.%-]+):(.*)$")
  local out = {}
  if server then
    local list = tai.mcp.resources({ server = server, quiet = true })
    for _, r in ipairs(list and list_of(list.resources) or {}) do
      if r.uri:sub(1, #prefix) == prefix and not r.uri:find("%s") then out[#out + 1] = "@" .. server .. ":" .. r.uri end
    end
    return out
  end
  local partial = word:sub(2)
  for _, name in ipairs(enabled_servers()) do
    if name:sub(1, #partial) == partial then out[#out + 1] = "@" .. name .. ":" end
  end
  return out
end

---@param server string
---@param tool string
---@param json_args? string
function M.call(server, tool, json_args)
  local args
  if json_args and json_args:match("%S") then
    local v, err = tai.json.decode(json_args)
    if err or type(v) ~= "table" then
      warn("arguments must be a JSON object: " .. tostring(err or json_args))
      return
    end
    args = v
  end
  local res, err = tai.mcp.call({ server = server, tool = tool, args = args })
  if not res then warn(clean(err)) return end
  for _, c in ipairs(res.content or {}) do
    if c.type == "text" then say(clean(c.text)) else say(clean(tai.json.encode(c))) end
  end
  if res.isError then warn("(the tool reported an error)") end
end

---@param what? string
function M.import(what)
  local args = {}
  for _, c in ipairs({ "claude-desktop", "claude-code", "cursor", "vscode", "codex", "gemini" }) do
    if what == c then args.client = c end
  end
  if not args.client then
    if not what or what == "" then
      warn("usage: /mcp import claude-desktop|claude-code|cursor|vscode|codex|gemini|PATH")
      return
    end
    args.path = what
  end
  local rep, err = tai.mcp.import(args)
  if not rep then warn(clean(err)) return end
  local added, skipped, refused = 0, 0, 0
  for _, f in ipairs(rep.files or {}) do
    say(clean(f.path) .. ":")
    if f.error and f.error ~= "" then warn("  not read: " .. clean(f.error)) end
    M.report(f.report or {})
    for _, s in ipairs((f.report or {}).servers or {}) do
      if s.outcome == tai.outcome.ADDED then added = added + 1
      elseif s.outcome == tai.outcome.SKIPPED then skipped = skipped + 1
      else refused = refused + 1 end
    end
  end
  say(string.format("import: %d added, %d skipped (already there), %d refused", added, skipped, refused))
end

local login_usage = "login SERVER [--client-id ID] [--client-secret ${NAME}] [--client-metadata-url URL] [--callback-port N] [--profile P]"
local usage = "usage: /mcp [list] | add [CONFIG|FILE|NAME|URL|GITHUB-URL|[NAME --] COMMAND ARGS…] | normalize [CONFIG] | enable SERVER… [PROFILE] | enable --all | disable SERVER… [PROFILE] | " ..
  "remove SERVER | tools [SERVER] | resources SERVER | call SERVER TOOL [JSON] | grant SERVER [TOOL|PROMPT|instructions] | allow SERVER PATH... | import CLIENT|PATH | log SERVER [LEVEL] | " .. login_usage

-- login_flags maps /mcp login's flags to tai.mcp.login's fields.
local login_flags = {
  ["--client-id"] = "client_id", ["--client-secret"] = "client_secret",
  ["--client-metadata-url"] = "client_metadata_url", ["--callback-port"] = "callback_port", ["--profile"] = "profile",
}

-- login(w) is /mcp login SERVER [--flag VALUE]...
---@param w string[]
function M.login(w)
  if not w[2] then warn("usage: /mcp " .. login_usage) return end
  local args = { server = w[2] }
  local i = 3
  while w[i] do
    local field = login_flags[w[i]]
    if not field or not w[i + 1] then
      warn("/mcp login: unknown flag or missing value at " .. clean(w[i]) .. "; flags: --client-id, --client-secret, --client-metadata-url, --callback-port, --profile")
      return
    end
    args[field] = field == "callback_port" and tonumber(w[i + 1]) or w[i + 1]
    if field == "callback_port" and not args[field] then warn("/mcp login: --callback-port wants a number") return end
    i = i + 2
  end
  local msg, err = tai.mcp.login(args)
  if not msg then warn(clean(err)) return end
  say(msg)
end

-- log_lines(server, log) lays out a server's log (tai.mcp.log's answer)
-- for the screen: a heading, then one line per message (its time, level,
-- logger and first line of text; a cut text says so).
---@param server string
---@param log tai.mcp.Log
---@return string[]
function M.log_lines(server, log)
  local out = {}
  local head = string.format("%s: %d message%s kept", clean(server), log.kept, log.kept == 1 and "" or "s")
  if log.dropped > 0 then head = head .. string.format(", %d older dropped", log.dropped) end
  if log.level then head = head .. string.format("; shown: %s and above", log.level) end
  out[1] = head
  if #log.entries == 0 then out[2] = "  (nothing logged" .. (log.level and " at that level" or "") .. ")" end
  for _, e in ipairs(log.entries) do
    local clock = (e.time or ""):match("T(%d%d:%d%d:%d%d)") or ""
    local who = (e.logger and e.logger ~= "") and (" " .. tai.term.clean(e.logger, true)) or ""
    local text = tai.term.clean(e.text, true)
    if e.cut then text = text .. string.format(" … (%d bytes, cut)", e.cut) end
    out[#out + 1] = string.format("  %s %-7s%s %s", clock, tai.term.clean(e.level, true), who, text)
  end
  return out
end

-- log(w) is /mcp log SERVER [LEVEL]: shows what the server logged, and
-- with LEVEL first asks it to log at that level and above.
---@param w string[]
function M.log(w)
  local levels = table.concat(M.log_levels, ", ")
  if not w[2] then warn("usage: /mcp log SERVER [LEVEL] (levels: " .. levels .. ")") return end
  local level = w[3] and w[3]:lower()
  local known = false
  for _, l in ipairs(M.log_levels) do known = known or l == level end
  if level and not known then
    warn("no log level is named " .. clean(w[3]) .. "; levels: " .. levels)
    return
  end
  local refused = server_refusal(w[2])
  if refused then warn(refused) return end
  local log, err = tai.mcp.log({ server = w[2], level = level })
  if not log then warn(clean(err)) return end
  if log.set then say(string.format("asked %s to log at %s and above", clean(w[2]), log.level)) end
  if log.note then warn(clean(log.note)) end
  for _, l in ipairs(M.log_lines(w[2], log)) do say(l) end
end

-- run(rest, w) is the /mcp command.
---@param rest string
---@param w string[]
---@return nil
function M.run(rest, w)
  local sub = w[1] or "list"
  if sub == "list" then return M.list() end
  if sub == "add" then
    local source = rest:match("^%s*add%s+(.-)%s*$")
    if not source or source == "" then
      source = M.read_paste()
      if not source then say("(cancelled)") return end
    end
    return M.add(M.command_line(source) or source, nil, true)
  end
  if sub == "normalize" then
    local source = rest:match("^%s*normalize%s+(.-)%s*$")
    if not source or source == "" then
      source = M.read_paste()
      if not source then say("(cancelled)") return end
    end
    return M.normalize(source)
  end
  if sub == "enable" or sub == "disable" then return M.enable(sub, { unpack(w, 2) }) end
  if sub == "remove" then
    if not w[2] then warn("usage: /mcp remove SERVER") return end
    local ok, err = tai.mcp.remove({ server = w[2] })
    if not ok then warn(clean(err)) return end
    say("removed " .. w[2])
    return
  end
  if sub == "tools" then return M.tools(w[2]) end
  if sub == "resources" then return M.resources(w[2]) end
  if sub == "call" then
    if not w[3] then warn("usage: /mcp call SERVER TOOL [JSON arguments]") return end
    return M.call(w[2], w[3], rest:match("^%s*call%s+%S+%s+%S+%s*(.-)%s*$"))
  end
  if sub == "grant" then
    if not w[2] then warn("usage: /mcp grant SERVER [TOOL | PROMPT | instructions]") return end
    local granted, err = tai.mcp.grant({ server = w[2], tool = w[3] })
    if not granted then warn(clean(err)) return end
    if #granted == 0 then say("nothing granted") else say("granted: " .. M.granted_text(granted)) end
    return
  end
  if sub == "allow" then
    if not w[3] then warn("usage: /mcp allow SERVER PATH... (lets a stdio server's sandbox read PATH)") return end
    local paths = {}
    for i = 3, #w do paths[#paths + 1] = w[i] end
    local said, err = tai.mcp.allow({ server = w[2], paths = paths })
    if not said then warn(clean(err)) return end
    say(said)
    return
  end
  if sub == "import" then return M.import(w[2]) end
  if sub == "login" then return M.login(w) end
  if sub == "log" then return M.log(w) end
  warn(usage)
end

-- enable_targets(words) reads the words after /mcp enable|disable: the
-- servers (every registered one for --all), then a profile when the last
-- word names one (else the current profile). Returns servers, profile, or
-- nil and why the words name nothing to enable, naming what exists.
---@param words string[]
---@return string[]|nil servers
---@return string|nil profile_or_err
function M.enable_targets(words)
  local list, err = tai.mcp.list()
  if not list then return nil, clean(err) end
  local known, all = {}, {}
  for _, s in ipairs(list) do known[s.name] = true all[#all + 1] = s.name end
  local profiles, known_p = {}, {}
  for _, p in ipairs(tai.profiles.list() or {}) do
    if not known_p[p.name] then profiles[#profiles + 1] = p.name known_p[p.name] = true end
  end
  for _, name in ipairs(repl().builtin_profiles or {}) do
    if not known_p[name] then profiles[#profiles + 1] = name known_p[name] = true end
  end
  table.sort(profiles)
  local servers, profile, every = {}, nil, false
  for i, word in ipairs(words) do
    local name = word:match("^%-%-profile=(.+)$")
    if word == "--all" then
      every = true
    elseif name or (word == "--profile" and words[i + 1]) then
      profile = name or words[i + 1]
    elseif words[i - 1] == "--profile" then
      -- read with --profile
    elseif known[word] then
      servers[#servers + 1] = word
    elseif i == #words and known_p[word] then
      profile = word
    else
      local what = i == #words and "no server or profile" or "no server"
      return nil, string.format("%s is named %s; servers: %s; profiles: %s", what, clean(word),
        #all > 0 and table.concat(all, ", ") or "none yet", table.concat(profiles, ", "))
    end
  end
  if profile and not known_p[profile] then
    return nil, string.format("no profile is named %s; profiles: %s (/profile new NAME adds one)", clean(profile), table.concat(profiles, ", "))
  end
  if every then servers = all end
  if #servers == 0 then return nil, "name a server, or --all; servers: " .. (#all > 0 and table.concat(all, ", ") or "none yet") end
  return servers, profile
end

-- enable(verb, words) is /mcp enable|disable SERVER… [PROFILE] (or --all).
---@param verb "enable"|"disable"
---@param words string[]
function M.enable(verb, words)
  if #words == 0 then warn("usage: /mcp " .. verb .. " SERVER… [PROFILE], or --all") return end
  local servers, profile = M.enable_targets(words)
  if not servers then warn(profile) return end
  local done, used = {}, profile
  for _, server in ipairs(servers) do
    local p, err = tai.mcp[verb]({ server = server, profile = profile })
    if not p then warn(clean(err)) else done[#done + 1] = server used = p end
  end
  if #done > 0 then say(string.format("%s %sd for profile %s", table.concat(done, ", "), verb, used)) end
end

local function server_names()
  local out = {}
  local list = tai.mcp.list()
  for _, s in ipairs(list or {}) do out[#out + 1] = s.name end
  return out
end

-- complete(word, line) completes subcommands, server names and tool names.
---@param word string
---@param line string
---@return string[]
function M.complete(word, line)
  local rest = line:match("^%s*/mcp%s+(.*)$") or ""
  if not rest:find("%s") then return M.subcommands end
  local sub, arg = rest:match("^(%S+)%s+(.*)$")
  local n = 0
  for _ in arg:gmatch("%S+") do n = n + 1 end
  if arg:match("%s$") or arg == "" then n = n + 1 end
  if sub == "import" and n == 1 then
    return { "claude-desktop", "claude-code", "cursor", "vscode", "codex", "gemini" }
  end
  if (sub == "enable" or sub == "disable" or sub == "remove" or sub == "tools" or sub == "resources" or sub == "grant" or sub == "allow" or sub == "call" or sub == "login" or sub == "log") and n == 1 then
    return server_names()
  end
  if (sub == "call" or sub == "grant") and n == 2 then
    local server = arg:match("^(%S+)")
    local out = {}
    for _, t in ipairs(tai.mcp.tools({ server = server }) or {}) do out[#out + 1] = t.tool end
    if sub == "grant" then
      -- a withheld prompt, and the server's instructions, are granted the same way
      for _, p in ipairs(tai.mcp.prompts({ server = server }) or {}) do
        if p.state == "withheld" then out[#out + 1] = p.name end
      end
      out[#out + 1] = "instructions"
    end
    return out
  end
  if sub == "log" and n == 2 then return M.log_levels end
  if (sub == "enable" or sub == "disable") and n == 2 then
    local out = {}
    for _, p in ipairs(tai.profiles.list() or {}) do out[#out + 1] = p.name end
    return out
  end
  return {}
end

M.help = "the MCP servers the model can use: add, list, tools, call, login, enable, …\n" ..
  "/mcp lists them; /mcp add (then paste), /mcp add FILE|NAME|URL|github.com/OWNER/REPO,\n" ..
  "/mcp normalize (then paste: show, store nothing), enable|disable SERVER… [PROFILE] or --all,\n" ..
  "remove SERVER, tools [SERVER], resources SERVER, call SERVER TOOL [JSON], grant SERVER [TOOL|PROMPT|instructions],\n" ..
  "allow SERVER PATH (its sandbox may read PATH), import CLIENT|PATH, login SERVER [--client-id ID],\n" ..
  "log SERVER [LEVEL] (what it logged; LEVEL asks it to log at that level and above)"

-- install() adds /mcp unless init.lua already defined a command of that name.
function M.install()
  for _, c in ipairs(tai.commands()) do
    if c.name == "mcp" then return end
  end
  tai.command("mcp", M.run, M.help, M.complete)
end

return M
