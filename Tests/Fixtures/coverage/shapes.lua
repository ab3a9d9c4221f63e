-- A module for the coverage test: some lines run, some never, some cannot run.
local shapes = {}

--[[ a long comment
     over lines ]]
local function square(x)
  return x * x
end

function shapes.area(kind, size)
  if kind == "square" then
    return square(size)
  elseif kind == "circle" then
    return math.pi * square(size)
  else
    error("unknown shape " .. tostring(kind))
  end
end

function shapes.perimeter(kind, size)
  local sides = {
    square = 4,
    triangle = 3,
  }
  if sides[kind] then
    return sides[kind] * size
  end
  return nil
end

function shapes.unused()
  local total = 0
  for i = 1, 10 do
    total = total + i
  end
  return total
end

return shapes
