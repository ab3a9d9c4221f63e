-- places: saved places kept in the store, and geofence events as the location moves.
-- Runs in its own Lua VM: it sees services.location and services.store (its `requires`) and
-- nothing of the scripts that use it. Its collection is its own, apart from the scripts'.
local location = services.location
local store = services.store
-- Releases before plugins had collections of their own kept the places in the scripts'
-- collection of this name: copy them into its own, once (the scripts' copy stays as it was).
local adopted, problem = pcall(function() return store:adopt(settings.collection) end)
if not adopted then log.warn("places: could not keep the places saved by an earlier release: " .. tostring(problem)) end
local saved = store:collection(settings.collection)
local radius = settings.radius

local places = service("places", "Saved places and geofence events.")
places:property("near", "place?", ("The saved place you are within `radius` m (%g) of, or nil."):format(radius))
places:event("didEnter", "{ place }", "You came within radius of a saved place.")
places:event("didExit", "{ place }", "You left the radius of the place you were near.")

-- Metres between two points on the Earth (haversine).
local function distance(a, b)
  local r, rad = 6371000, math.pi / 180
  local dlat, dlon = (b.lat - a.lat) * rad, (b.lon - a.lon) * rad
  local h = math.sin(dlat / 2) ^ 2 + math.cos(a.lat * rad) * math.cos(b.lat * rad) * math.sin(dlon / 2) ^ 2
  return 2 * r * math.asin(math.min(1, math.sqrt(h)))
end

local function place(record)
  return { name = record.name, lat = record.lat, lon = record.lon }
end

local function find(name)
  for _, record in ipairs(saved.items) do
    if record.name == name then return record end
  end
end

-- The saved place nearest to `fix` within radius, or nil.
local function nearest(fix)
  local best, bestDistance
  for _, record in ipairs(saved.items) do
    local d = distance(fix, record)
    if d <= radius and (not bestDistance or d < bestDistance) then best, bestDistance = record, d end
  end
  return best and place(best)
end

local function same(a, b) return (a and a.name) == (b and b.name) end

-- `near` is set from the location there is as the plugin starts, so a script's first read has it
-- (the first fix the observer below delivers comes a turn later). The events are announced from
-- the fixes the observer delivers only: `inside` is the place the last didEnter named.
local current = location.location and nearest(location.location)
if current then places:set("near", current) end
local inside
local function update(fix)
  local now = fix and nearest(fix)
  if not same(now, current) then
    current = now
    places:set("near", now)
  end
  if same(now, inside) then return end
  local before = inside
  inside = now
  if before then places:emit("didExit", { place = before }) end
  if now then places:emit("didEnter", { place = now }) end
end

places:method("add", { "name: string", "location: location?" }, "place",
  "Saves a place under `name` (the current location when `location` is omitted).",
  function(name, at)
    if name == "" then error(service_error("invalid_argument", "name is empty")) end
    at = at or location.location
    if not at then error(service_error("unavailable", "no location yet: pass one, or start services.location")) end
    if find(name) then error(service_error("invalid_argument", ("a place named '%s' is saved already"):format(name))) end
    local record, err = saved:add({ name = name, lat = at.lat, lon = at.lon })
    if err then error(err) end
    update(location.location)
    return place(record)
  end)

places:method("remove", { "name: string" }, "true",
  "Forgets the place named `name` (not_found when there is none).",
  function(name)
    local record = find(name)
    if not record then error(service_error("not_found", ("no place named '%s'"):format(name))) end
    local _, err = saved:remove(record.id)
    if err then error(err) end
    update(location.location)
    return true
  end)

places:method("list", {}, "{places}", "Every saved place, in the order they were added.",
  function()
    local list = {}
    for _, record in ipairs(saved.items) do list[#list + 1] = place(record) end
    return list
  end)

observe(location, "location", function(fix) update(fix) end)
