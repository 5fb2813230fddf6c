-- import-servers.lua: register the MCP servers your other clients already
-- use: Claude Desktop, Claude Code, Cursor, VS Code, Codex and Gemini CLI,
-- read from their config files at the places each documents (under your
-- home folder, and the project's own files in this folder), or from the
-- files you name. Each server goes through the same consent and live check
-- as /mcp add; the report says what was added, skipped (already there) or
-- refused, and why.
--
--   tai scripts/import-servers.lua                     every client's files (asks before each start)
--   tai scripts/import-servers.lua cursor vscode       only these clients
--   tai --auto scripts/import-servers.lua --enable     and enable what was added for the profile
--   tai scripts/import-servers.lua ./some/mcp.json     a file of any client's shape
--
-- Exit status: 0 when nothing was refused, 1 otherwise, 2 on bad usage.
local tai = require("tai")

local clients = { "claude-desktop", "claude-code", "cursor", "vscode", "codex", "gemini" }
local known = {}
for _, c in ipairs(clients) do known[c] = true end

local enable, wanted = false, {}
for _, a in ipairs(arg) do
  if a == "--enable" then
    enable = true
  elseif a:sub(1, 1) == "-" then
    io.stderr:write("usage: tai scripts/import-servers.lua [--enable] [" .. table.concat(clients, "|") .. "|FILE]…\n")
    os.exit(2)
  else
    wanted[#wanted + 1] = a
  end
end
if #wanted == 0 then wanted = clients end

local added, skipped, refused, found = 0, 0, 0, false
for _, what in ipairs(wanted) do
  local rep, err = tai.mcp.import(known[what] and { client = what } or { path = what })
  if not rep then
    print(what .. ": " .. err)
  end
  for _, f in ipairs(rep and rep.files or {}) do
    found = true
    print(f.path)
    if f.error then
      print("  not read: " .. f.error)
      refused = refused + 1
    end
    for _, s in ipairs(f.report.servers) do
      print(string.format("  %-8s %s%s", s.outcome, s.server, s.reason and (": " .. s.reason) or ""))
      if s.outcome == "added" then
        added = added + 1
        if enable then
          local profile, eerr = tai.mcp.enable({ server = s.server })
          print("  " .. (profile and ("enabled  " .. s.server .. " for profile " .. profile) or ("not enabled: " .. eerr)))
        end
      elseif s.outcome == "skipped" then
        skipped = skipped + 1
      else
        refused = refused + 1
      end
    end
    for _, n in ipairs(f.report.notes or {}) do
      if n.level ~= "info" then print("  note     " .. (n.server ~= "" and (n.server .. ": ") or "") .. n.text) end
    end
  end
end
if not found then
  io.stderr:write("import-servers.lua: no config file found; name one: tai scripts/import-servers.lua FILE\n")
  os.exit(1)
end
print(string.format("%d added, %d skipped (already there), %d refused", added, skipped, refused))
if refused > 0 then os.exit(1) end
