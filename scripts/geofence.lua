#!/usr/bin/env crescent
-- geofence.lua: the places plugin live on a track. It saves a few places along the GPX track,
-- then prints each place you enter and leave as the replay moves.
--   crescent --location gpx:scripts/tracks/paris.gpx@120x --data-dir :memory: scripts/geofence.lua
-- (run from the repository, where plugins/ holds the places plugin)
local places = services.places

local Fence = controller("Fence")

function Fence:loadView()
  return view.stack {
    view.text { id = "title", text = "Geofence" },
    view.keyvalue { id = "state", pairs = { { "near", "nowhere yet" } } },
    view.list { id = "log" },
  }
end

function Fence:viewWillAppear()
  self.events = {}
  self:start(services.location)
  self:on("places.didEnter", function(payload) self:record("entered " .. payload.place.name) end)
  self:on("places.didExit", function(payload) self:record("left " .. payload.place.name) end)
  self:observe(places, "near", function(near)
    self.view.state:update({ { "near", near and near.name or "nowhere" } })
  end)
end

function Fence:record(line)
  self.events[#self.events + 1] = line
  self.view.log:update(self.events)
end

task(function()
  for _, p in ipairs({
    { "Hôtel de Ville", 48.8566, 2.3522 },
    { "Saint-Michel", 48.8530, 2.3434 },
    { "Sèvres", 48.8240, 2.2110 },
  }) do
    local _, err = places:add(p[1], { lat = p[2], lon = p[3] })
    if err and err.code ~= "invalid_argument" then print("cannot save " .. p[1] .. ": " .. tostring(err)) end
  end
  app.push(Fence)
end)
