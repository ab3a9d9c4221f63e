#!/usr/bin/env crescent
-- geocode.lua: automation. Reads `lat,lon` lines (from a file argument, else stdin) and writes
-- CSV with the nearest place, for a pipe:
--   printf '48.8566,2.3522\n51.5072,-0.1276\n' | crescent scripts/geocode.lua
--   crescent scripts/geocode.lua points.txt > places.csv
local input = arg[1] and assert(io.open(arg[1], "r")) or io.stdin

local function csv(value)
  value = tostring(value or "")
  if value:find('[,"\n]') then value = '"' .. value:gsub('"', '""') .. '"' end
  return value
end

-- Read every point first so the geocoder answers them as one batch.
local points = {}
local number = 0
for line in input:lines() do
  number = number + 1
  local lat, lon = line:match("^%s*([-+%d.eE]+)%s*,%s*([-+%d.eE]+)%s*$")
  if lat then
    points[#points + 1] = { lat = tonumber(lat), lon = tonumber(lon) }
  elseif line:match("%S") then
    io.stderr:write(("geocode.lua: line %d is not lat,lon: %s\n"):format(number, line))
  end
end

task(function()
  print("lat,lon,name,admin1,country,distance_m")
  if #points == 0 then return end
  local results, err = services.geocoder:reverse(points)
  if err then
    io.stderr:write("geocode.lua: " .. tostring(err) .. "\n")
    return app.exit(1)
  end
  for i, placemarks in ipairs(results) do
    local p = placemarks[1]
    print(table.concat({ points[i].lat, points[i].lon, csv(p.name), csv(p.admin1), csv(p.country),
                         ("%.0f"):format(p.distance) }, ","))
  end
end)
