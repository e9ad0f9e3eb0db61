-- inventory.lua: long strings and comments must not count as brackets.
local M = {}

--[[ A long comment with ( and {
     spanning lines ]]
local HELP = [[
Usage: inventory.add(name, qty) -- not a comment in here (
]]
local LEVEL = [==[ nested ]] still inside { ]==]

local function clamp(x, lo, hi)
  if x < lo then return lo end
  if x > hi then return hi end
  return x
end

function M.new(items)
  local self = { items = items or {}, count = 0 }
  for _, item in ipairs(self.items) do
    self.count = self.count + (item.qty or 0)
  end
  return setmetatable(self, { __index = M })
end

function M:add(name, qty)
  local key = name:lower() .. "]"
  self.items[#self.items + 1] = { name = key, qty = clamp(qty, 0, 99) }
  self.count = self.count + qty
  return self
end

M.describe = function(self)
  return string.format("%d items (%s)", self.count, 'ok')
end

return M
