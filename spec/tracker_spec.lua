-- The tracker names the place of each fix: the location and its failures are faked, the
-- geocoder is the real one.
describe("tracker", function()
  it("names the place of each fix as it comes", function()
    fake.location { fixes = { { lat = 48.8534, lon = 2.3488, speed = 1.5, course = 90 }, { lat = 45.74846, lon = 4.84671 } },
                    interval = 60 }
    script("scripts/tracker.lua")
    clock.advance(0)
    assert.matches("Paris, France", view_text())
    assert.matches("5.4 km/h", view_text())
    clock.advance(60)
    assert.matches("Lyon, France", view_text())
  end)

  it("shows the first fix as the golden file does", function()
    fake.location { fixes = { { lat = 48.8534, lon = 2.3488 } } }
    script("scripts/tracker.lua")
    clock.advance(0)
    assert.view("spec/golden/tracker.txt")
  end)

  it("shows a pinned place as the golden screen does", function()
    fake.location { fixes = { { lat = 48.8534, lon = 2.3488 } } }
    script("scripts/tracker.lua")
    clock.advance(0)
    press("p")
    clock.advance(0)
    assert.view("spec/golden/tracker-pinned.txt", { width = 80, height = 12 })
  end)

  it("waits for a fix before naming anything", function()
    fake.location { fixes = { { lat = 48.8566, lon = 2.3522 } }, interval = 10 }
    script("scripts/tracker.lua")
    assert.matches("waiting for a fix", view_text())
  end)

  it("says why there is no fix when the device fails", function()
    local location = fake.location { fixes = {} }
    script("scripts/tracker.lua")
    clock.advance(0)
    location:fail("unavailable", "gpsd is not running")
    clock.advance(1)
    assert.matches("No fix: gpsd is not running", view_text())
  end)

  it("looks the place up again on refresh", function()
    fake.location { fixes = { { lat = 51.5072, lon = -0.1276 } } }
    script("scripts/tracker.lua")
    clock.advance(0)
    send("refresh")
    clock.advance(0)
    assert.matches("London", view_text())
  end)

  it("looks the place up again on r and pins it on p", function()
    fake.location { fixes = { { lat = 51.5072, lon = -0.1276 }, { lat = 48.8566, lon = 2.3522 } }, interval = 60 }
    script("scripts/tracker.lua")
    clock.advance(0)
    press("p")
    clock.advance(0)
    assert.matches("pinned: London", view_text())
    clock.advance(60)
    press("r")
    clock.advance(0)
    assert.matches("place +Paris", view_text())
    assert.matches("pinned: London", view_text())
    assert.matches("r refresh  p pin this place  %? help  q quit", screen_text(80, 12))
  end)

  it("follows a recorded track, one point a second", function()
    fake.location { track = "scripts/tracks/paris.gpx", interval = 1 }
    script("scripts/tracker.lua")
    clock.advance(0)
    assert.matches("France", view_text())
    local first = services.location.location
    clock.advance(30)
    assert.truthy(services.location.location.time > first.time, "the fix of 30 s later is newer")
  end)
end)
