-- pull-all.lua runs git pull in every repository of a folder, several at once, with a live table.
local function folder(...)
  local root = os.tmpname()
  os.remove(root)
  local paths = { root }
  for _, name in ipairs({ ... }) do paths[#paths + 1] = root .. "/" .. name end
  assert(os.execute("mkdir -p '" .. table.concat(paths, "' '") .. "'"))
  return root
end

-- app.exit would end the test. The file's tests share one Lua state, as under busted: the
-- after_each below puts back what these replace.
local exit, print = app.exit, print
local function recordExits()
  local codes = {}
  rawset(app, "exit", function(code) codes[#codes + 1] = code end)
  return codes
end

-- What the script prints (on a terminal, written out once the app's screen is gone).
local function recordPrints()
  local lines = {}
  rawset(_G, "print", function(...) lines[#lines + 1] = table.concat({ ... }, "\t") end)
  return lines
end

describe("pull-all", function()
  local root
  after_each(function()
    rawset(app, "exit", exit)
    rawset(_G, "print", print)
    if root then os.execute("rm -rf '" .. root .. "'") end
  end)

  it("pulls each repository and shows their states", function()
    root = folder("alpha/.git", "beta/.git", "notes")
    local exits = recordExits()
    local printed = recordPrints()
    local git = fake.process {
      ["git -C " .. root .. "/alpha pull --ff-only"] = { stdout = "Already up to date.\n" },
      ["git -C " .. root .. "/beta pull --ff-only"] = { stdout = "Updating 1a2b..3c4d\nFast-forward\n 2 files changed\n" },
    }
    script("scripts/pull-all.lua", root)
    clock.run()
    local text = view_text()
    assert.matches("alpha%s+up to date%s+Already up to date%.", text)
    assert.matches("beta%s+updated%s+2 files changed", text)
    assert.matches("1 up to date, 1 updated", text)
    assert.equals(2, #git.calls)
    assert.equals("0", git.calls[1].env.GIT_TERMINAL_PROMPT)
    assert.same({ 0 }, exits)
    -- The table is gone with the screen: the summary and what changed stay.
    assert.same({ "pull-all.lua: 1 up to date, 1 updated", "  " .. root .. "/beta: updated:  2 files changed" }, printed)
  end)

  it("reports a failed pull and exits 1", function()
    root = folder("broken/.git")
    fake.process { git = { status = 1, stderr = "fatal: Not possible to fast-forward, aborting.\n" } }
    local exits = recordExits()
    local printed = recordPrints()
    script("scripts/pull-all.lua", root)
    clock.run()
    assert.matches("broken%s+failed %(1%)%s+fatal: Not possible to fast%-forward", view_text())
    assert.same({ 1 }, exits)
    assert.same({ "pull-all.lua: 1 failed", "  " .. root .. "/broken: failed (1): fatal: Not possible to fast-forward, aborting." }, printed)
  end)

  it("runs no more than --jobs pulls at once", function()
    root = folder("a/.git", "b/.git", "c/.git")
    local calls = 0
    fake.process { git = function()
      calls = calls + 1
      return { stdout = "Already up to date.\n" }
    end }
    recordExits()
    script("scripts/pull-all.lua", "--jobs", "1", root)
    clock.run()
    assert.equals(3, calls)
    assert.matches("3 up to date", view_text())
  end)
  it("stops on q and prints the summary all the same, naming the pulls it stopped", function()
    root = folder("a/.git", "b/.git", "c/.git")
    local exits = recordExits()
    local printed = recordPrints()
    -- q pressed while the first pull runs and the others wait (a faked program ends at once).
    local stopped = false
    fake.process { git = function()
      if not stopped then stopped = true app.top:leave() end
      return { stdout = "Already up to date.\n" }
    end }
    script("scripts/pull-all.lua", "--jobs", "1", root)
    clock.run()
    assert.equals(1, exits[1])
    assert.matches("stopped", printed[1])
    assert.same({ "pull-all.lua: 3 stopped", "  " .. root .. "/a: stopped while pulling",
                  "  " .. root .. "/b: stopped while waiting", "  " .. root .. "/c: stopped while waiting" },
                { printed[1], printed[2], printed[3], printed[4] })
  end)
end)
