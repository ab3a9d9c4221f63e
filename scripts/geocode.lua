#!/usr/bin/env crescent
-- geocode.lua: automation. Reads `lat,lon` lines (from a file argument, else stdin) and writes
-- CSV with the nearest place (its town or city, and the section of the city when it lies in
-- one, with the time zone), for a pipe:
--   printf '48.8566,2.3522\n51.5072,-0.1276\n' | crescent scripts/geocode.lua
--   crescent scripts/geocode.lua points.txt > places.csv
local input = arg[1] and assert(io.open(arg[1], "r")) or io.stdin

local function csv(value)
  value = tostring(value or "")
  if value:find('[,"\n]') then value = '"' .. value:gsub('"', '""') .. '"' end
  return value
end

-- Read every point first so the geocoder answers them as one batch.
local points, lines = {}, {}
local number = 0
for line in input:lines() do
  number = number + 1
  local lat, lon = line:match("^%s*([-+%d.eE]+)%s*,%s*([-+%d.eE]+)%s*$")
  lat, lon = tonumber(lat), tonumber(lon)
  if lat and lon and lat >= -90 and lat <= 90 and lon >= -180 and lon <= 180 then
    points[#points + 1] = { lat = lat, lon = lon }
    lines[#points] = number
  elseif line:match("%S") then
    -- One bad line is reported and skipped: the rest of the batch goes on.
    io.stderr:write(("geocode.lua: line %d is not lat,lon in degrees (lat in [-90, 90], lon in [-180, 180]): %s\n")
      :format(number, line:sub(1, 80)))
  end
end

task(function()
  print("lat,lon,locality,subLocality,admin1,country,timeZone,distance_m")
  if #points == 0 then return end
  local results, err = services.geocoder:reverse(points)
  for i, point in ipairs(points) do
    local placemarks = results and results[i]
    if err then
      -- The batch was refused: ask point by point, so one bad point costs only its line.
      local one, pointErr = services.geocoder:reverse(point)
      placemarks = one
      if pointErr then io.stderr:write(("geocode.lua: line %d: %s\n"):format(lines[i], tostring(pointErr))) end
    end
    local p = placemarks and placemarks[1]
    if p then
      print(table.concat({ point.lat, point.lon, csv(p.locality), csv(p.subLocality), csv(p.admin1), csv(p.country),
                           csv(p.timeZone), ("%.0f"):format(p.distance) }, ","))
    end
  end
end)
