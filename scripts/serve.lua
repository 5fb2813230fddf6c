-- serve.lua: serve tai over MCP with the key kept in the vault, so it never
-- appears on a command line, plus a tool of the script's own.
--
--   export TAI_MCP_KEY=$(openssl rand -hex 32)
--   tai -e 'assert(tai.vault.secret_set("mcp-key", os.getenv("TAI_MCP_KEY")))'
--   tai scripts/serve.lua [PORT]
--
-- Clients then send Authorization: Bearer $TAI_MCP_KEY (the start-up
-- banner shows the configuration for each client).
local tai = require("tai")

local secret = "mcp-key"
if not tai.vault.secret_get(secret) then
  io.stderr:write("serve.lua: no vault secret " .. secret .. "; store the key first:\n" ..
    "  export TAI_MCP_KEY=$(openssl rand -hex 32)\n" ..
    "  tai -e 'assert(tai.vault.secret_set(\"" .. secret .. "\", os.getenv(\"TAI_MCP_KEY\")))'\n")
  os.exit(2)
end

tai.tool{
  name = "utc_time",
  description = "The current date and time in UTC, as ISO 8601.",
  safe = true,
  run = function() return os.date("!%Y-%m-%dT%H:%M:%SZ") end,
}

local port = arg[1] and tonumber(arg[1]) or nil
assert(tai.serve{key_secret = secret, port = port})
