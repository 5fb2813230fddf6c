-- add-servers.lua: add a list of MCP servers and enable each one added for
-- a profile, then list what tai has. Each source is what /mcp add takes: a
-- config file of any client's shape (JSON or TOML), an http(s) URL, a
-- GitHub repository URL or a pasted entry; each server goes through the
-- same consent and live check.
--
--   tai --auto scripts/add-servers.lua servers.json more.toml
--   tai --auto scripts/add-servers.lua --profile work servers.json https://mcp.example.com/mcp
--
-- Without --profile the servers are enabled for the current profile.
-- Exit status: 0 when every server was added or was already there, 1
-- otherwise, 2 on bad usage.
local tai = require("tai")

local usage = "usage: tai scripts/add-servers.lua [--profile NAME] SOURCE…\n"
local profile, sources = nil, {}
local i = 1
while i <= #arg do
  if arg[i] == "--profile" then
    profile = arg[i + 1]
    if not profile then io.stderr:write(usage) os.exit(2) end
    i = i + 2
  else
    sources[#sources + 1] = arg[i]
    i = i + 1
  end
end
if #sources == 0 then
  io.stderr:write(usage)
  os.exit(2)
end
if profile then
  -- Enabling for a name no profile has would enable nothing anyone uses.
  local _, err = tai.profiles.get(profile)
  if err then
    io.stderr:write("add-servers.lua: " .. err .. "\n")
    os.exit(2)
  end
end

local failed = false
for _, source in ipairs(sources) do
  local rep, err = tai.mcp.add({ source = source, profile = profile })
  if not rep then
    print(source .. ": " .. err)
    failed = true
  else
    for _, s in ipairs(rep.servers) do
      print(string.format("%s: %s %s%s", source, s.outcome, s.server, s.reason and (" (" .. s.reason .. ")") or ""))
      if s.outcome == "added" then
        local p, eerr = tai.mcp.enable({ server = s.server, profile = profile })
        print(p and ("  enabled for " .. p) or ("  not enabled: " .. eerr))
        failed = failed or not p
      end
      failed = failed or s.outcome == "refused"
    end
  end
end
for _, s in ipairs(assert(tai.mcp.list())) do
  print(string.format("%-16s %-5s %s tools, enabled for: %s", s.name, s.transport, s.tools,
    #s.profiles > 0 and table.concat(s.profiles, ", ") or "none"))
end
if failed then os.exit(1) end
