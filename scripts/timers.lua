-- timers.lua: a first look at Crescent's loop. Timers, a task that sleeps, and an orderly exit
-- once nothing is left to do.  Run it with `crescent scripts/timers.lua [name]`.
local name = arg[1] or "world"
print(("Hello, %s! This is Crescent on %s."):format(name, _VERSION))

local ticks = 0
timer.every(0.25, function(t)
  ticks = ticks + 1
  print(("tick %d"):format(ticks))
  if ticks == 4 then t:cancel() end
end)

task(function()
  print("a task starts and sleeps for half a second")
  sleep(0.5)
  print("the task woke up; inspect shows any value:")
  print(inspect({ name = name, ticks = ticks, nested = { 1, 2.5, "three" } }))
  print("json too: " .. json.encode({ ok = true, items = { 1, 2, 3 } }))
end)
-- The main chunk returns here; the run ends when the timer and the task are done.
