#!/usr/bin/env crescent
-- hello.lua: the smallest controller. A view built in loadView, a command bound in viewDidLoad,
-- a timer owned by the controller while it is visible.
--   crescent scripts/hello.lua            (type `greet Ada`, `help` or `quit`; Ctrl-C also quits)
--   printf 'greet Ada\nquit\n' | crescent scripts/hello.lua
local Hello = controller("Hello")

function Hello:init(args)
  self.name = args.name or app.args[1] or "world"
  self.seconds = 0
end

function Hello:loadView()
  return view.stack {
    view.text { id = "greeting" },
    view.text { id = "clock" },
  }
end

function Hello:viewDidLoad()
  self:command("greet", "greet", "greet NAME: say hello to someone else")
  self.view.greeting.text = "Hello, " .. self.name .. "!"
end

function Hello:viewWillAppear()
  self:every(1, function()               -- ends by itself when the controller disappears
    self.seconds = self.seconds + 1
    self.view.clock.text = ("on screen for %d s"):format(self.seconds)
  end)
end

function Hello:greet(name)
  self.name = name or "world"
  self.view.greeting.text = "Hello, " .. self.name .. "!"
end

app.push(Hello)
