-- busted's module, called inside a running test or its hooks: as busted 2.1.1 does, its declaring
-- functions do nothing there (the globals fail the test), whatever they are given, and it has no
-- `finally` (only a test's own).
local busted = require("busted")
local ran = {}

describe("the busted module inside a running test", function()
  it("declares nothing: it, describe, pending and the hooks", function()
    busted.it("never runs", function() ran.it = true end)
    busted.spec("never runs either", function() ran.spec = true end)
    busted.describe("never read", function() ran.describe = true end)
    busted.insulate("never read either", function() ran.insulate = true end)
    busted.pending("not pending: the test passes")
    busted.before_each(function() ran.before_each = true end)
    busted.after_each(function() ran.after_each = true end)
    busted.setup(function() ran.setup = true end)
    busted.teardown(function() ran.teardown = true end)
    busted.it(nil)
    assert.same({}, ran)
  end)
  it("has no finally", function() assert.is_nil(busted.finally) end)
  it("fails calling its finally", function() busted.finally(function() end) end)
  it("left nothing to run", function() assert.same({}, ran) end)
end)

describe("the busted module in a test's hooks", function()
  before_each(function() busted.it("from before_each", function() ran.hook = true end) end)
  after_each(function() busted.describe("from after_each", function() ran.hook = true end) end)
  it("declares nothing there either", function() assert.is_nil(ran.hook) end)
  it("and no test was added", function() assert.is_nil(ran.hook) end)
end)

describe("the globals inside a running test", function()
  it("fail it", function() it("inner", function() end) end)
end)

busted.describe("the busted module outside a test", function()
  busted.before_each(function() ran.outside = true end)
  busted.it("declares as the globals do", function() assert.is_true(ran.outside) end)
  busted.pending("a pending test")
end)
