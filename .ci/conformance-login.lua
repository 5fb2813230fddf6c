-- The official conformance suite's authorization scenarios with tai's own
-- login as the client, the way a person would do it: the server is added
-- (stored disabled, it answers 401), tai.mcp.login logs in (pre-registered
-- credentials from MCP_CONFORMANCE_CONTEXT, the secret kept in the vault
-- and named as ${NAME}; the suite's client metadata document URL), then
-- the first tool is called. Run as: tai --yolo conformance-login.lua URL,
-- with $BROWSER a command that follows the mock's redirects.
local url = arg[#arg]
assert(url and url:match("^https?://"), "usage: tai --yolo conformance-login.lua SERVER_URL")

local login = {
  server = "conformance",
  client_metadata_url = "https://conformance-test.local/client-metadata.json",
}
local context = os.getenv("MCP_CONFORMANCE_CONTEXT")
if context and context ~= "" then
  local c = assert(tai.json.decode(context))
  login.client_id = c.client_id
  if c.client_secret then
    assert(tai.vault.secret_set("CONFORMANCE_CLIENT_SECRET", c.client_secret))
    login.client_secret = "${CONFORMANCE_CLIENT_SECRET}"
  end
end

local source = tai.json.encode({ mcpServers = { conformance = { url = url } } })
local rep = assert(tai.mcp.add({ source = source }))
local added = rep.servers[1]
assert(added.outcome == "added", "add: " .. tostring(added.reason))

print(assert(tai.mcp.login(login)))
local tools = assert(tai.mcp.tools({ server = "conformance" }))
assert(#tools > 0, "the server lists no tools")
local result = assert(tai.mcp.call({ server = "conformance", tool = tools[1].tool, args = {} }))
print(tools[1].tool .. ": " .. tostring(result.content and result.content[1] and result.content[1].text))
