-- context.lua: what the model is told besides the conversation: the
-- system prompt (what tai is, how its tools behave, where it runs) and the
-- project's instruction files. Replace any part from init.lua:
--   local context = require("tai.context")
--   context.files = { "AGENTS.md", "CLAUDE.md", "GEMINI.md" }
--   context.max_file_bytes = 64 * 1024
--   context.prompt = function(env) return "You are terse. cwd " .. env.cwd end
-- or put your own lua/tai/context.lua in ~/.config/tai/.
local tai = require("tai")

local M = {}

-- files are the instruction files read in every folder from the
-- repository root down to the working directory (AGENTS.md is the open
-- convention Codex, Cursor, Jules and others read).
M.files = { "AGENTS.md" }

-- fallbacks are read in a folder that holds none of files: the first of
-- them found there (what Claude Code and Gemini CLI read).
M.fallbacks = { "CLAUDE.md", "GEMINI.md" }

-- names_in(folder) are the instruction files to read in folder: files,
-- or the first fallback there when it holds none of them.
local function names_in(folder)
  local base = (folder == "/" and "" or folder) .. "/"
  for _, name in ipairs(M.files) do
    if tai.file_kind(base .. name) ~= nil then return M.files end
  end
  for _, name in ipairs(M.fallbacks) do
    if tai.file_kind(base .. name) ~= nil then return { name } end
  end
  return {}
end

-- max_file_bytes caps each instruction file; max_total_bytes all of them
-- (the nearest files, which come last, are kept first).
M.max_file_bytes = 32 * 1024
M.max_total_bytes = 96 * 1024

-- env() describes where tai runs.
---@return table
function M.env()
  local shell = os.getenv("SHELL")
  if not shell or shell == "" then shell = "/bin/sh" end
  return {
    cwd = tai.cwd(),
    os = tai.os,
    date = os.date("%Y-%m-%d (%A)"),
    shell = shell,
    mode = tai.mode,
  }
end

-- prompt(env) is the default system prompt.
---@param env table
---@return string
function M.prompt(env)
  return table.concat({
    "You are tai, an agent working in a terminal for the person at its keyboard. You act through tools: " ..
      "read and search files, edit and write them, run shell commands, fetch URLs, keep secrets and records in " ..
      "tai's vault, and call the tools of MCP servers the person has added.",
    "How the tools behave: read-only tools run at once; tools that change something (writing files, the shell, " ..
      "http_fetch, lua, MCP tools) " .. (env.mode == "interactive"
        and "are shown to the person, who may refuse a call, so say briefly why you make it. "
        or "run without asking in this session (the person chose --" .. tostring(env.mode) .. "), so be careful with them. ") ..
      "Arguments must match the tool's schema; a call that does not is answered with the error and nothing runs. " ..
      "Long results are stored as vault records and come back truncated with a record id: read the rest with " ..
      "record_read. Known secret values are replaced by [REDACTED:name] everywhere; never try to recover them. " ..
      "Use tool_search to find tools that are not offered yet, and ask_user when you need a decision.",
    "Work in small verified steps: read before you edit, prefer edit_file for changes to existing files, run the " ..
      "project's tests or build when you change code, and report what you did and what you could not do.",
    string.format("Environment: working directory %s; OS %s; shell %s; today is %s.", env.cwd, env.os, env.shell, env.date),
  }, "\n\n")
end

local function exists(path)
  return tai.file_kind(path) ~= nil
end

-- top(dir) is the highest folder the walk up from dir may reach: the
-- home folder for a dir inside it, else "/".
local function top(dir)
  local home = os.getenv("HOME")
  if home and home ~= "" and home ~= "/" then
    home = home:gsub("/+$", "")
    if dir == home or dir:sub(1, #home + 1) == home .. "/" then return home end
  end
  return "/"
end

-- root(dir) is the repository root above dir (the nearest folder holding
-- a .git the person can trust: tai.file_trusted), else dir itself. The
-- walk never goes above the home folder for a dir inside it, and skips a
-- .git another user planted (in /tmp, say).
---@param dir string
---@return string
function M.root(dir)
  local d, stop = dir, top(dir)
  while d do
    local git = (d == "/" and "" or d) .. "/.git"
    if exists(git) and tai.file_trusted(git) then return d end
    if d == stop then break end
    d = d:match("^(.+)/[^/]*$") or (d ~= "/" and "/" or nil)
  end
  return dir
end

-- folders(dir) lists the folders from the repository root down to dir.
---@param dir string
---@return string[]
function M.folders(dir)
  local root = M.root(dir)
  local out = { root }
  if dir ~= root then
    local rest = dir:sub(#root + 1):gsub("^/", "")
    local cur = root
    for part in rest:gmatch("[^/]+") do
      cur = (cur == "/" and "" or cur) .. "/" .. part
      out[#out + 1] = cur
    end
  end
  return out
end

-- instructions(dir) reads the instruction files from the repository root
-- down to dir, nearest last: { {path=, text=, truncated=bool}, … }; then
-- all found, and the files skipped because another user could have
-- written them ({ {path=, why=}, … }: tai.file_trusted).
---@param dir string
---@return {path: string, text: string, truncated: boolean}[]
---@return {path: string, text: string, truncated: boolean}[]
---@return {path: string, why: string}[]
function M.instructions(dir)
  local found, skipped = {}, {}
  for _, folder in ipairs(M.folders(dir)) do
    for _, name in ipairs(names_in(folder)) do
      local path = (folder == "/" and "" or folder) .. "/" .. name
      if exists(path) then
        local ok, why = tai.file_trusted(path)
        if ok then
          local text, truncated = tai.read_text(path, M.max_file_bytes)
          if text then
            found[#found + 1] = { path = path, text = text, truncated = truncated }
          end
        else
          skipped[#skipped + 1] = { path = path, why = why }
        end
      end
    end
  end
  -- keep the nearest files when all of them are too much
  local total, keep = 0, {}
  for i = #found, 1, -1 do
    total = total + #found[i].text
    if total > M.max_total_bytes then
      found[i].dropped = true
    else
      table.insert(keep, 1, found[i])
    end
  end
  return keep, found, skipped
end

-- parts(profile) lists what the system message is made of, in order:
-- { {name=, text=}, … }.
---@param profile table?
---@return {name: string, text: string}[]
function M.parts(profile)
  local env = M.env()
  local parts = { { name = "tai's system prompt (stdlib context.lua)", text = M.prompt(env) } }
  if profile and profile.system and profile.system ~= "" then
    parts[#parts + 1] = { name = "profile " .. profile.name .. " system", text = profile.system }
  end
  for _, f in ipairs((M.instructions(env.cwd))) do
    local note = f.truncated and string.format("\n[cut at %d bytes]", M.max_file_bytes) or ""
    parts[#parts + 1] = { name = f.path, text = "Instructions from " .. f.path .. ":\n\n" .. f.text .. note }
  end
  return parts
end

-- mcp_instructions() lists the instructions of the MCP servers enabled
-- for the profile ({server=, text=, state=, reason=}): the engine adds
-- the granted ones after the system message, each fenced in a block
-- naming its server; withheld ones are not sent. {} when tai.mcp cannot
-- say.
---@return {server: string, text: string, state: string, reason?: string}[]
function M.mcp_instructions()
  local ok, list = pcall(tai.mcp.instructions)
  if not ok or type(list) ~= "table" then return {} end
  return list
end

-- system(profile) is the whole system message.
---@param profile table?
---@return string
function M.system(profile)
  local texts = {}
  for _, p in ipairs(M.parts(profile)) do texts[#texts + 1] = p.text end
  return table.concat(texts, "\n\n")
end

return M
