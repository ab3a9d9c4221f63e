-- A finally that fails after its test did: busted reports the test's outcome and the finally's
-- error, each an entry of its own under the test's name; one in a passing test is an error.
it("fails then finally errors", function()
  finally(function() error("finally boom") end)
  assert.equals(1, 2)
end)
it("finally fails assert after error", function()
  finally(function() assert.equals(1, 2) end)
  error("body boom")
end)
it("ok then finally fails", function()
  finally(function() assert.equals(1, 2) end)
end)
