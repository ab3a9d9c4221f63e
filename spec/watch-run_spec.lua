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
end)
