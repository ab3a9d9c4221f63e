-- A busted output handler for the side-by-side tests (busted -o outcomes.lua): one line per
-- test, "status<TAB>full name", with busted's four statuses. Busted's own json handler stops
-- with no output on some suites (a describe whose body fails, pending() inside a test).
return function(options)
  local busted = require("busted")
  local handler = require("busted.outputHandlers.base")()
  local statuses = { successes = "success", failures = "failure", errors = "error", pendings = "pending" }
  handler.suiteEnd = function()
    for list, status in pairs(statuses) do
      for _, element in ipairs(handler[list]) do io.write(status, "\t", element.name, "\n") end
    end
    return nil, true
  end
  busted.subscribe({ "suite", "end" }, handler.suiteEnd)
  return handler
end
