-- An expose block at a file's top level, for environments_spec.lua (the file after it): what its
-- body assigns reaches the files after it, what the file's top level assigns does not.
CrossFileTop = "this file's"
expose("environments: a file's expose block", function()
  CrossFile = "exposed"
  it("sees its own global and the file's", function()
    assert.equals("exposed", CrossFile)
    assert.equals("this file's", CrossFileTop)
  end)
end)
