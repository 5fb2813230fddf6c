-- import-servers.lua: register the MCP servers another client already
-- uses, through the same consent and live check as /mcp add.
--
--   tai scripts/import-servers.lua claude-desktop            (asks before each start)
--   tai --auto scripts/import-servers.lua cursor --enable    (and enable them here)
--   tai scripts/import-servers.lua ./some/mcp.json
local tai = require("tai")

local clients = { ["claude-desktop"] = true, ["claude-code"] = true, cursor = true, vscode = true, codex = true, gemini = true }
local what, flag = arg[1], arg[2]
if not what or (flag and flag ~= "--enable") then
  io.stderr:write("usage: tai scripts/import-servers.lua claude-desktop|claude-code|cursor|vscode|codex|gemini|FILE [--enable]\n")
  os.exit(2)
end

local rep = assert(tai.mcp.import(clients[what] and { client = what } or { path = what }))
local added, skipped, refused = 0, 0, 0
for _, f in ipairs(rep.files) do
  print(f.path)
  if f.error then print("  not read: " .. f.error) end
  for _, s in ipairs(f.report.servers) do
    print(string.format("  %-8s %s%s", s.outcome, s.server, s.reason and (": " .. s.reason) or ""))
    if s.outcome == "added" then
      added = added + 1
      if flag == "--enable" then
        print("  enabled  " .. s.server .. " for profile " .. assert(tai.mcp.enable({ server = s.server })))
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
print(string.format("%d added, %d skipped (already there), %d refused", added, skipped, refused))
