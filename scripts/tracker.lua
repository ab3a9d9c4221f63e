#!/usr/bin/env crescent
-- tracker.lua: follows the location and names the place it is in. The location service owns the
-- position; the geocoder answers each fix; the controller only coordinates.
--   crescent --location gpx:scripts/tracks/paris.gpx@60x scripts/tracker.lua   (what `make run` does)
--   crescent --location gpsd:127.0.0.1:2947 scripts/tracker.lua
-- On a terminal: r looks the place up again, p pins the current place (shown below), q quits.
local Tracker = controller("Tracker")

function Tracker:loadView()
  return view.stack {
    view.text { id = "title", text = "Where am I?" },
    view.keyvalue { id = "place", pairs = { { "place", "waiting for a fix…" } } },
    view.text { id = "pinned" },
  }
end

function Tracker:viewDidLoad()
  self:key("r", "refresh", "refresh")
  self:key("p", "pin", "pin this place")
  self:command("refresh", "refresh", "look the current place up again")
  self:command("pin", "pin", "pin the current place")
end

-- Keeps the place named last on screen, below the one that follows the location.
function Tracker:pin()
  if not self.here then return print("no place to pin yet") end
  self.view.pinned.text = "pinned: " .. self.here
end

-- A failure's message says what to do (start gpsd, or choose --location fixed:LAT,LON ...): it
-- is wrapped at 60 columns, since each line of a view.text is cut at the terminal's width.
local function wrapped(text, width)
  local lines, line = {}, ""
  for word in text:gmatch("%S+") do
    if line ~= "" and #line + 1 + #word > width then
      lines[#lines + 1] = line
      line = word
    else
      line = line == "" and word or line .. " " .. word
    end
  end
  lines[#lines + 1] = line
  return table.concat(lines, "\n")
end

function Tracker:viewWillAppear()
  self:start(services.location)                                   -- stops when the tracker goes
  -- latest: a new fix cancels the lookup of the one before if it is still waiting, so an older
  -- answer never overwrites a newer one on screen.
  self:observe(services.location, "location", "locationChanged", { initial = false, latest = true })
  self:on("location.didFail", function(err) self.view.title.text = wrapped("No fix: " .. tostring(err.message), 60) end)
end

-- A controller method is a task: it can wait for the geocoder without a completion.
function Tracker:locationChanged(fix)
  if not fix then return end
  local placemarks, err = services.geocoder:reverse(fix)
  if err then
    self.view.place:update({ { "error", tostring(err) } })
    return
  end
  local place = placemarks[1]
  self.here = ("%s, %s"):format(place.locality, place.country)
  self.view.title.text = "Where am I?"
  self.view.place:update({
    { "place", self.here },
    { "distance", ("%.1f km away"):format(place.distance / 1000) },
    { "position", ("%.5f, %.5f"):format(fix.lat, fix.lon) },
    { "speed", fix.speed and ("%.1f km/h"):format(fix.speed * 3.6) or "-" },
    { "course", fix.course and ("%.0f°"):format(fix.course) or "-" },
  })
end

function Tracker:refresh()
  local fix = services.location.location
  if fix then self:locationChanged(fix) end
end

app.push(Tracker)
