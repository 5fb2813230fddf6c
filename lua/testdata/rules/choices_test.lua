-- Tests for chat.choices_of, each run as a Go subtest.
local chat = require("chat")

local function eq(got, want, what)
  if got ~= want then error(string.format("%s: got %q, want %q", what, tostring(got), tostring(want)), 2) end
end

local function list(t) return t and table.concat(t, " ") or "nil" end

return {
  ["a question's closing bracket names its keys, the capital one first"] = function()
    eq(list(chat.choices_of("Add it? [y/d/N]")), "n y d", "add")
    eq(list(chat.choices_of("? tai is about to start x:\n  run: a\nStart it? [y/N]  ")), "n y", "start")
  end,

  ["no bracket, no capital or words: a line answers"] = function()
    eq(list(chat.choices_of("Which file should I read?")), "nil", "plain")
    eq(list(chat.choices_of("Pick one [a/b]")), "nil", "no default")
    eq(list(chat.choices_of("Pick one [A/B]")), "nil", "two defaults")
    eq(list(chat.choices_of("Continue [yes/No]")), "nil", "words")
    eq(list(chat.choices_of("[y/N] is what you type, then?")), "nil", "not at the end")
  end,
}
