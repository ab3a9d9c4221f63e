-- watch-run.lua runs a command at start, again when files change or on `rerun` (or `r`), and shows its
-- result and the tail of its output.
local function folder()
  local root = os.tmpname()
  os.remove(root)
  assert(os.execute("mkdir -p '" .. root .. "'"))
  return root
end

describe("watch-run", function()
  local root
  before_each(function() root = folder() end)
  after_each(function() os.execute("rm -rf '" .. root .. "'") end)

  it("runs the command at start and shows its result and output", function()
    local make = fake.process { ["make test"] = { status = 0, stdout = "compiling\nall 12 tests passed\n" } }
    script("scripts/watch-run.lua", "--path", root, "--", "make", "test")
    clock.run()
    local text = view_text()
    assert.matches("watching .*: make test", text)
    assert.matches("#1 ok", text)
    assert.matches("all 12 tests passed", text)
    assert.equals(1, #make.calls)
  end)

  it("runs again on rerun and on a change, showing a failure", function()
    local runs = 0
    fake.process { make = function()
      runs = runs + 1
      if runs == 1 then return { stdout = "fine\n" } end
      return { status = 2, stderr = "error: oops\n" }
    end }
    script("scripts/watch-run.lua", "--path", root, "--", "make")
    clock.run()
    send("rerun")
    clock.run()
    assert.equals(2, runs)
    assert.matches("#2 exit 2", view_text())
    assert.matches("! error: oops", view_text())
    app.top:changed({ changes = { { path = root .. "/main.c", kind = "modified" } } })
    clock.run()
    assert.equals(3, runs)
    assert.matches("#3 exit 2", view_text())
    press("r")
    clock.run()
    assert.equals(4, runs)
    assert.matches("#4 exit 2", view_text())
  end)

  it("runs a command line through the shell only with --shell", function()
    local sh = fake.process { ["make && ./app"] = { stdout = "built\n" } }
    script("scripts/watch-run.lua", "--path", root, "--shell", "--", "make && ./app")
    clock.run()
    assert.equals(1, #sh.calls)
    assert.is_true(sh.calls[1].shell)
    assert.same({ "/bin/sh", "-c", "make && ./app" }, sh.calls[1].argv)
    assert.matches("built", view_text())
  end)
  it("says when the watched folder is removed, and watches again once it is back", function()
    local runs = 0
    fake.process { make = function() runs = runs + 1 return { stdout = "run " .. runs .. "\n" } end }
    script("scripts/watch-run.lua", "--path", root, "--", "make")
    clock.run()
    assert.equals(1, runs)
    assert(os.execute("rm -rf '" .. root .. "'"))
    clock.advance(1)
    assert.matches("waiting for .* to come back %(it was removed%)", view_text())
    assert(os.execute("mkdir -p '" .. root .. "'"))
    clock.advance(1)
    local back = runs
    assert.matches("watching .*: make", view_text())
    -- Watched again: a file saved in the new folder runs the command.
    local file = assert(io.open(root .. "/main.c", "w"))
    file:write("int main;\n")
    file:close()
    clock.advance(1)
    assert.equals(back + 1, runs)
  end)

  it("quits on a q line, as its status line says", function()
    local exit = app.exit
    local codes = {}
    rawset(app, "exit", function(code) codes[#codes + 1] = code end)
    fake.process { make = { stdout = "ok\n" } }
    script("scripts/watch-run.lua", "--path", root, "--", "make")
    clock.run()
    assert.matches("q quits", view_text())
    send("q")
    clock.run()
    rawset(app, "exit", exit)
    assert.same({ 0 }, codes)
  end)
end)
