-- add-servers.lua: add every MCP server in the config files given (JSON
-- or TOML, any client's shape), then list what tai has.
--
--   tai --auto scripts/add-servers.lua servers.json more.toml
local tai = require("tai")

if #arg == 0 then
  io.stderr:write("usage: tai scripts/add-servers.lua FILE…\n")
  os.exit(2)
end
local failed = false
for _, file in ipairs(arg) do
  local rep, err = tai.mcp.add({ source = file })
  if not rep then
    print(file .. ": " .. err)
    failed = true
  else
    for _, s in ipairs(rep.servers) do
      print(string.format("%s: %s %s%s", file, s.outcome, s.server, s.reason and (" (" .. s.reason .. ")") or ""))
      failed = failed or s.outcome == "refused"
    end
  end
end
for _, s in ipairs(assert(tai.mcp.list())) do
  print(string.format("%-16s %-5s %s tools, enabled for: %s", s.name, s.transport, s.tools,
    #s.profiles > 0 and table.concat(s.profiles, ", ") or "none"))
end
if failed then os.exit(1) end
