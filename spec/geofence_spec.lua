-- The places plugin (plugins/places, a Lua plugin in its own VM) through scripts/geofence.lua:
-- the location is faked, the plugin, the store (in memory) and its events are real.
describe("geofence", function()
  it("enters and leaves the saved places as the fixes move", function()
    fake.location { fixes = {
      { lat = 48.8000, lon = 2.4000 },   -- nowhere near a saved place
      { lat = 48.8566, lon = 2.3522 },   -- at the Hôtel de Ville
      { lat = 48.8530, lon = 2.3434 },   -- Saint-Michel, 750 m on
      { lat = 48.8000, lon = 2.4000 },   -- away again
    }, interval = 10 }
    script("scripts/geofence.lua")
    clock.advance(0)
    assert.matches("near%s+nowhere", view_text())
    clock.advance(10)
    assert.matches("near%s+Hôtel de Ville", view_text())
    assert.matches("entered Hôtel de Ville", view_text())
    clock.advance(10)
    assert.matches("left Hôtel de Ville", view_text())
    assert.matches("entered Saint%-Michel", view_text())
    clock.advance(10)
    assert.matches("left Saint%-Michel", view_text())
    assert.matches("near%s+nowhere", view_text())
  end)
end)
