-- inspect.lua: renders any Lua value readably. Tables are pretty-printed
-- with the list part first and the other keys sorted; cycles are marked.
--   local inspect = require("tai.inspect")
--   print(inspect({1, 2, x = {y = true}}))
local M = {}

local function is_ident(k)
  return type(k) == "string" and k:match("^[%a_][%w_]*$") ~= nil
end

local function scalar(v)
  local t = type(v)
  if t == "string" then
    return string.format("%q", v)
  elseif t == "number" then
    if v == math.floor(v) and v > -2^53 and v < 2^53 then
      return string.format("%d", v)
    end
    return tostring(v)
  end
  return tostring(v)
end

local function sorted_keys(t, n)
  local keys = {}
  for k in pairs(t) do
    if not (type(k) == "number" and k >= 1 and k <= n and k == math.floor(k)) then
      keys[#keys + 1] = k
    end
  end
  table.sort(keys, function(a, b)
    local ta, tb = type(a), type(b)
    if ta ~= tb then return ta < tb end
    if ta == "number" or ta == "string" then return a < b end
    return tostring(a) < tostring(b)
  end)
  return keys
end

local function render(v, indent, seen, out)
  if type(v) ~= "table" then
    out[#out + 1] = scalar(v)
    return
  end
  if seen[v] then
    out[#out + 1] = "<cycle>"
    return
  end
  seen[v] = true
  local n = 0
  while rawget(v, n + 1) ~= nil do n = n + 1 end
  local keys = sorted_keys(v, n)
  if n == 0 and #keys == 0 then
    local mt = getmetatable(v)
    out[#out + 1] = (mt and mt.__name == "json.array") and "[]" or "{}"
    seen[v] = nil
    return
  end
  local pad = indent .. "  "
  out[#out + 1] = "{\n"
  for i = 1, n do
    out[#out + 1] = pad
    render(v[i], pad, seen, out)
    out[#out + 1] = ",\n"
  end
  for _, k in ipairs(keys) do
    out[#out + 1] = pad
    if is_ident(k) then
      out[#out + 1] = k
    else
      out[#out + 1] = "[" .. scalar(k) .. "]"
    end
    out[#out + 1] = " = "
    render(v[k], pad, seen, out)
    out[#out + 1] = ",\n"
  end
  out[#out + 1] = indent .. "}"
  seen[v] = nil
end

-- inspect(value) -> string
---@param v any
---@return string
function M.inspect(v)
  local out = {}
  render(v, "", {}, out)
  return table.concat(out)
end

return setmetatable(M, { __call = function(_, v) return M.inspect(v) end })
