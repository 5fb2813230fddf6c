-- lua-tool.lua: give the model a tool written in Lua, then ask it something
-- the tool answers. word_stats counts the lines, words and bytes of a text
-- file in this folder; it only reads, so it is marked safe and runs
-- without a consent question. The tool calls are shown on stderr as they happen.
--
--   tai scripts/lua-tool.lua "How many words are in README.md?"
--
-- To have the tool in every session (the REPL, tai -p, tai --serve-mcp),
-- put the tai.tool{…} call in ~/.config/tai/init.lua.
local tai = require("tai")

if not arg[1] or arg[1] == "" then
  io.stderr:write("usage: tai scripts/lua-tool.lua QUESTION\n")
  os.exit(2)
end

tai.tool({
  name = "word_stats",
  description = "Counts the lines, words and bytes of a text file.",
  safe = true,
  parameters = {
    type = "object",
    properties = { path = { type = "string", description = "the file, relative to the working directory" } },
    required = { "path" },
  },
  run = function(args)
    -- Safe tools run without asking, so this one stays inside the folder.
    if args.path:sub(1, 1) == "/" or args.path:sub(1, 1) == "~" or ("/" .. args.path .. "/"):find("/../", 1, true) then
      error("give a path inside the working directory, without .. or a leading / or ~", 0)
    end
    local text, truncated = tai.read_text(args.path)
    if not text then error(truncated, 0) end -- the message: a result with isError, which the model reads
    local _, lines = text:gsub("\n", "")
    if text ~= "" and text:sub(-1) ~= "\n" then lines = lines + 1 end
    local words = 0
    for _ in text:gmatch("%S+") do words = words + 1 end
    return string.format("%s: %d lines, %d words, %d bytes%s", args.path, lines, words, #text,
      truncated and " (only the first MiB was read)" or "")
  end,
})

local answer, info = tai.chat(table.concat(arg, " "), {
  tools = { "word_stats" }, -- offer this tool alone
  on_tool_start = function(ev) io.stderr:write("→ " .. ev.name .. " " .. tai.json.encode(ev.args or {}) .. "\n") end,
  on_tool_end = function(ev) io.stderr:write("← " .. ev.name .. " " .. (ev.outcome or "") .. "\n") end,
})
if not answer then
  io.stderr:write("lua-tool.lua: " .. tostring(info) .. "\n")
  os.exit(1)
end
print(answer)
