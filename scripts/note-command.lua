-- note-command.lua: a REPL command of your own, /note, keeping short notes
-- in the vault as records (newest first; the vault's record retention
-- applies to them too):
--
--   /note TEXT      keeps TEXT
--   /note           lists the notes
--   /note rm ID     deletes one (Tab completes "rm" and the ids)
--
-- Load it at every start from ~/.config/tai/init.lua:
--
--   dofile("/path/to/tai/scripts/note-command.lua")
--
-- or run it as a script to do the same from the shell:
--
--   tai scripts/note-command.lua [TEXT | rm ID]
local tai = require("tai")

-- notes returns the note records among the last 500 records, newest
-- first, or nil and why.
local function notes()
  local list, err = tai.vault.record_list(500)
  if not list then return nil, err end
  local out = {}
  for _, r in ipairs(list) do
    if r.meta.note then out[#out + 1] = r end
  end
  return out
end

-- note runs /note: it returns true, or nil and what went wrong.
local function note(rest, words)
  if rest == "" then
    local list, err = notes()
    if not list then return nil, err end
    if #list == 0 then print("no notes yet: /note TEXT keeps one") end
    for _, r in ipairs(list) do
      local text, err = tai.vault.record_get(r.id)
      print(string.format("%s  %s  %s", r.id, r.created or "", text or err))
    end
  elseif words[1] == "rm" and #words == 2 then
    local ok, err = tai.vault.record_delete(words[2])
    if not ok then return nil, err end
    print("deleted " .. words[2])
  else
    local id, err = tai.vault.record_put(rest, { note = true })
    if not id then return nil, err end
    print("noted (" .. id .. ")")
  end
  return true
end

-- complete offers "rm" for the first word and the ids after it.
local function complete(word, line)
  if line:match("^%s*/note%s+rm%s+%S*$") then
    local ids = {}
    for _, r in ipairs(notes() or {}) do ids[#ids + 1] = r.id end
    return ids
  end
  return { "rm" }
end

tai.command("note", function(rest, words)
  local ok, err = note(rest, words)
  if not ok then tai.term.warn("/note: " .. err) end
end, "keep notes in the vault: /note TEXT, /note lists them, /note rm ID", complete)

-- Run as a script (tai scripts/note-command.lua …), arg holds its words;
-- loaded from init.lua, there is no arg and the command is only added.
if arg then
  local ok, err = note(table.concat(arg, " "), arg)
  if not ok then
    io.stderr:write("note-command.lua: " .. err .. "\n")
    os.exit(1)
  end
end
