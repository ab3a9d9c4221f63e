-- A nested describe's body runs after its outer block's strict setup, as busted runs it (the
-- lazy one waits for the first test); a setup that fails runs none of the bodies inside.
describe("outer", function()
  local v
  setup(function() v = 42 end)
  describe("inner", function()
    local w = v
    it("w", function() assert.equals(42, w) end)
  end)
end)
describe("outer2", function()
  local v
  lazy_setup(function() v = 43 end)
  describe("inner", function()
    local w = v
    it("w", function() assert.equals(43, w) end)
  end)
end)
describe("outer3", function()
  local v
  strict_setup(function() v = 44 end)
  describe("inner", function()
    local w = v
    it("w", function() assert.equals(44, w) end)
  end)
end)
describe("outer4", function()
  local v
  setup(function() v = 45 end)
  it("first", function() end)
  describe("inner", function()
    local w = v
    it("w", function() assert.equals(45, w) end)
  end)
end)
describe("outer5", function()
  local v
  setup(function() error("setup5") end)
  describe("inner", function()
    it("w", function() end)
  end)
end)
describe("outer6", function()
  local log = {}
  setup(function() log[#log+1] = "setup" end)
  describe("inner", function()
    log[#log+1] = "inner body"
    it("w", function() assert.same({"setup", "inner body"}, log) end)
  end)
  it("after", function() end)
end)
