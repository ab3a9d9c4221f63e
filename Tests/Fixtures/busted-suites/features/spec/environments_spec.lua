-- busted's per-block environments, each case beside what it must not change: a global a block's
-- code assigns (not `_G.X`) stays in that block, seen by its hooks, tests and nested blocks.
-- Run under busted and under crescent test, every test must end the same.
Shadowed = "the file's"

describe("environments: sibling blocks", function()
  describe("the first", function()
    Sibling = "the first's"
    it("sees its own global", function() assert.equals("the first's", Sibling) end)
  end)
  describe("the second", function()
    local seen = Sibling
    it("does not see the first's", function()
      assert.is_nil(seen)
      assert.is_nil(Sibling)
    end)
  end)
end)

describe("environments: nested blocks", function()
  Outer = "the outer's"
  describe("inner", function()
    local seen = Outer
    Inner = "the inner's"
    it("sees the outer block's and its own", function()
      assert.equals("the outer's", seen)
      assert.equals("the outer's", Outer)
      assert.equals("the inner's", Inner)
    end)
  end)
  it("does not see the inner block's", function() assert.is_nil(Inner) end)
end)

describe("environments: hooks", function()
  setup(function() FromSetup = "set up" end)
  before_each(function() FromBeforeEach = "before each" end)
  -- A hook runs in its block's environment, not the test's: the test's own global is not seen.
  after_each(function() assert.is_nil(FromTest) end)
  it("sees what its block's hooks set", function()
    assert.equals("set up", FromSetup)
    assert.equals("before each", FromBeforeEach)
    FromTest = "the test's"
  end)
  describe("nested", function()
    it("sees them too", function()
      assert.equals("set up", FromSetup)
      assert.equals("before each", FromBeforeEach)
    end)
  end)
  it("keeps them out of the real globals", function()
    assert.is_nil(rawget(_G, "FromSetup"))
    assert.is_nil(rawget(_G, "FromBeforeEach"))
  end)
end)

describe("environments: a test body's global", function()
  it("is the test's own", function()
    TestGlobal = "the test's"
    finally(function() assert.equals("the test's", TestGlobal) end)
    assert.equals("the test's", TestGlobal)
    -- Code loaded with the real globals (a module, a script) does not see it.
    assert.is_nil(load("return TestGlobal")())
  end)
end)

describe("environments: a global read before its block assigns it", function()
  local before = Shadowed
  Shadowed = "the block's"
  it("reads the file's, then the block's", function()
    assert.equals("the file's", before)
    assert.equals("the block's", Shadowed)
  end)
end)
it("environments: the file's global stays the file's", function() assert.equals("the file's", Shadowed) end)

describe("environments: a function declared in a block", function()
  function BlockHelper() return "helped" end
  it("is the block's", function() assert.equals("helped", BlockHelper()) end)
end)
describe("environments: a sibling of that block", function()
  it("has no such function", function() assert.is_nil(BlockHelper) end)
end)

describe("environments: _G.X", function()
  _G.RealGlobal = "real"
  RealGlobal = "the block's"
  it("is a real global, the block's own shadowing it", function()
    assert.equals("the block's", RealGlobal)
    assert.equals("real", _G.RealGlobal)
  end)
end)
describe("environments: after _G.X", function()
  it("sees the real global", function() assert.equals("real", RealGlobal) end)
end)

describe("environments: rawset(_G, ...)", function()
  rawset(_G, "RawGlobal", "raw")
  RawGlobal = "the block's"
  it("is a real global, the block's own shadowing it", function()
    assert.equals("the block's", RawGlobal)
    assert.equals("raw", rawget(_G, "RawGlobal"))
  end)
end)
describe("environments: after rawset(_G, ...)", function()
  it("sees the raw global", function() assert.equals("raw", RawGlobal) end)
end)

describe("environments: insulate", function()
  insulate("an insulated block", function()
    _G.InsulatedReal = "real"
    describe("one", function()
      InsulatedOne = "one's"
      it("sees its own and the real global", function()
        assert.equals("one's", InsulatedOne)
        assert.equals("real", InsulatedReal)
      end)
    end)
    describe("two", function()
      it("does not see one's", function() assert.is_nil(InsulatedOne) end)
    end)
  end)
  it("undoes the real global after it", function() assert.is_nil(InsulatedReal) end)
end)

describe("environments: expose", function()
  describe("holder", function()
    expose("an exposed block", function()
      Exposed = "exposed"
      it("sees its global", function() assert.equals("exposed", Exposed) end)
    end)
    it("sees it after the expose block", function() assert.equals("exposed", Exposed) end)
  end)
  it("sees it in the block around its own", function() assert.equals("exposed", Exposed) end)
end)
it("environments: the file does not see an expose block's global from deeper down", function()
  assert.is_nil(Exposed)
end)

describe("environments: false", function()
  -- busted's lookup passes over a false value: the block's false reads as the file's value.
  Shadowed = false
  it("reads the value around it", function() assert.equals("the file's", Shadowed) end)
end)

describe("environments: an earlier file's expose block", function()
  it("gives the files after it its global", function() assert.equals("exposed", CrossFile) end)
  it("keeps it out of the real globals", function() assert.is_nil(rawget(_G, "CrossFile")) end)
  it("does not give them its file's top-level global", function() assert.is_nil(CrossFileTop) end)
end)
