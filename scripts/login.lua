-- login.lua: add a remote MCP server that needs an OAuth login, log in to
-- it and list its tools. The login opens your browser ($BROWSER when set)
-- and prints the URL too; on a machine without one (SSH), open the URL
-- elsewhere and paste the address the browser ends on at the prompt.
--
--   tai --auto scripts/login.lua https://mcp.example.com/mcp [NAME]
--   tai scripts/login.lua NAME            (a server added earlier)
--   tai scripts/login.lua NAME --client-id ID [--client-secret '${SECRET_NAME}'] [--callback-port N]
--
-- --client-id is for a provider that registers no clients by itself: give
-- the id of an app you registered there (its secret as a ${NAME}
-- reference to a vault secret, and the redirect port it allows).
local tai = require("tai")

local usage = "usage: tai scripts/login.lua URL|NAME [NAME] [--client-id ID] [--client-secret '${SECRET}'] [--callback-port N]\n"
local words, login = {}, {}
local i = 1
while i <= #arg do
  local flag, value = arg[i], arg[i + 1]
  if flag == "--client-id" and value then
    login.client_id = value
  elseif flag == "--client-secret" and value then
    login.client_secret = value
  elseif flag == "--callback-port" and tonumber(value) then
    login.callback_port = tonumber(value)
  elseif flag:sub(1, 2) == "--" then
    io.stderr:write(usage)
    os.exit(2)
  else
    words[#words + 1] = flag
    i = i - 1
  end
  i = i + 2
end
if #words < 1 or #words > 2 then
  io.stderr:write(usage)
  os.exit(2)
end

local server = words[1]
if server:match("^https?://") then
  local rep, err = tai.mcp.add({ source = server, name = words[2] })
  if not rep then
    io.stderr:write("login.lua: " .. err .. "\n")
    os.exit(1)
  end
  local s = rep.servers[1]
  print(string.format("%s %s%s", s.outcome, s.server, s.reason and (": " .. s.reason) or ""))
  if s.outcome == "refused" then os.exit(1) end
  server = s.server
  if s.outcome == "added" and not s.needs_login then
    print(server .. " needs no login; it is ready")
    os.exit(0)
  end
end

login.server = server
local msg, err = tai.mcp.login(login)
if not msg then
  io.stderr:write("login.lua: " .. err .. "\n")
  os.exit(1)
end
print(msg)
for _, t in ipairs(assert(tai.mcp.tools({ server = server }))) do
  print(string.format("  %-24s %s", t.tool, t.description))
end
