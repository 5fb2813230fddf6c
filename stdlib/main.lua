-- main.lua: start-up dispatch. The Go side calls the function this module
-- returns with the invocation:
--   { mode = "repl" | "script" | "eval" | "prompt" | "serve", script = path,
--     chunk = text, prompt = text (tai -p), continue = bool (tai -c),
--     profile = the --profile given ("" when none), args = { ... },
--     serve = { key =, port =, bind = } (tai --serve-mcp; the tool budget
--     of chatview.tool_budget is added),
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
-- It returns the function that closes the line editor again.
local function ask_on_terminal()
  local rl
  if tai.term.isatty("stdin") and tai.term.isatty("stderr") then
    local function get_rl()
      rl = rl or tai.term.readline({ output = "stderr" })
      return rl
    end
    tai.prompter(require("tai.chatview").prompter(get_rl, function(s) tai.term.ewrite(s .. "\n") end))
  end
  return function()
    if rl then rl:close() end
  end
end

-- run_user(fn, args) runs the user's script or chunk: an error is reported
-- with the traceback of the user's code only (not of this file), and the
-- exit status says how it ended.
local function run_user(fn, args)
  local ok, err = tai.term.protect(fn, unpack(args))
  if ok then return 0 end
  if err == "interrupted" then
    tai.term.warn("tai: interrupted")
    return 130
  end
  tai.term.warn("tai: " .. tostring(err))
  return 1
end

-- compile_error reports a script or chunk that does not compile: the
-- message names the user's file and line; there is no traceback to give.
local function compile_error(err)
  tai.term.warn("tai: " .. tostring(err))
  return 1
end

return function(inv)
  local args = inv.args or {}
  if inv.init then run_init(inv.init) end

  if inv.mode == "eval" then
    arg = { [0] = "-e" }
    for i, a in ipairs(args) do arg[i] = a end
    local fn, err = loadstring(inv.chunk, "(command line)")
    if not fn then return compile_error(err) end
    local close = ask_on_terminal()
    local status = run_user(fn, args)
    close()
    return status
  elseif inv.mode == "script" then
    arg = { [0] = inv.script }
    for i, a in ipairs(args) do arg[i] = a end
    local fn, err = load_script(inv.script)
    if not fn then return compile_error(err) end
    local close = ask_on_terminal()
    local status = run_user(fn, args)
    close()
    return status
  elseif inv.mode == "prompt" then
    return require("tai.chatview").oneshot(inv.prompt, inv)
  elseif inv.mode == "serve" then
    -- After init.lua, so the tools it adds with tai.tool are served too.
    inv.serve.tool_budget = require("tai.chatview").tool_budget()
    local ok, err = tai.serve(inv.serve)
    if not ok then
      tai.term.warn("tai: " .. tostring(err))
      return 1
    end
    return 0
  end
  return require("tai.repl").run(inv)
end
