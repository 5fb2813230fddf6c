-- main.lua: start-up dispatch. The Go side calls the function this module
-- returns with the invocation:
--   { mode = "repl" | "script" | "eval" | "prompt", script = path,
--     chunk = text, prompt = text (tai -p), args = { ... },
--     init = path of init.lua or nil }
-- A number returned becomes the exit status.
local tai = require("tai")

local function run_init(path)
  local fn, err = loadfile(path)
  if fn then
    local ok, msg = tai.term.protect(fn)
    if ok then return end
    err = msg
  end
  tai.term.warn("tai: init.lua failed (continuing without the rest of it): " .. tostring(err))
end

-- load_script compiles a script file; a first line starting with "#" (a
-- shebang such as #!/usr/bin/env tai) is skipped, keeping line numbers.
local function load_script(path)
  local f, err = io.open(path, "rb")
  if not f then return nil, err end
  local src = f:read("*a")
  f:close()
  if src:sub(1, 1) == "#" then src = "--" .. src end
  return loadstring(src, path)
end

-- ask_on_terminal makes consent and questions (a script's own tai.call of
-- a non-safe tool, a tai.chat turn) be asked on the terminal when there is
-- one; otherwise such calls are denied. The line editor is opened only when
-- a question comes.
local function ask_on_terminal()
  if tai.term.isatty("stdin") and tai.term.isatty("stderr") then
    local rl
    local function get_rl()
      rl = rl or tai.term.readline({ output = "stderr" })
      return rl
    end
    tai.prompter(require("chat").prompter(get_rl, function(s) tai.term.ewrite(s .. "\n") end))
  end
end

return function(inv)
  local args = inv.args or {}
  if inv.init then run_init(inv.init) end

  if inv.mode == "eval" then
    arg = { [0] = "-e" }
    for i, a in ipairs(args) do arg[i] = a end
    local fn, err = loadstring(inv.chunk, "(command line)")
    if not fn then error(err, 0) end
    ask_on_terminal()
    fn(unpack(args))
    return 0
  elseif inv.mode == "script" then
    arg = { [0] = inv.script }
    for i, a in ipairs(args) do arg[i] = a end
    local fn, err = load_script(inv.script)
    if not fn then error(err, 0) end
    ask_on_terminal()
    fn(unpack(args))
    return 0
  elseif inv.mode == "prompt" then
    return require("chat").oneshot(inv.prompt)
  end
  return require("repl").run()
end
