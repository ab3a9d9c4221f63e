-- latest.lua: the wrapper of a `{ latest = true }` subscription's handler.
-- Uses only standard Lua 5.4.
--
-- The chunk takes the host's `task(context, fn, ...)` (a task whose error is reported under
-- `context`) and returns a function of a handler and its subscription's context: the handler it
-- gives back runs the handler as a task per delivery and cancels the task of the delivery before
-- when it is still running (waiting on a service), so only the newest delivery's work reaches the
-- view. Its errors name the subscription as a plain handler's do.

local task = ...

return function(handler, context)
  local current
  return function(...)
    if current and not current.done then current:cancel() end
    current = task(context, handler, ...)
  end
end
