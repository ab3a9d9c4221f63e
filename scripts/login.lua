#!/usr/bin/env crescent
-- login.lua: a controller that reacts to the session's currentUser (observed, never assigned)
-- and offers register, login and logout commands.
--   printf 'register ada s3cret-pass\nlogin ada s3cret-pass\nlogout\nquit\n' | crescent --data-dir /tmp/login scripts/login.lua
local Login = controller("Login")

function Login:loadView()
  return view.stack { view.text("Session"), view.keyvalue { id = "user" }, view.text { id = "message" } }
end

function Login:viewDidLoad()
  self:command("register", "register", "register NAME PASSWORD")
  self:command("login", "login", "login NAME PASSWORD")
  self:command("logout", "logout", "log out")
end

function Login:viewWillAppear()
  self:observe(services.session, "currentUser", "userChanged")
end

function Login:userChanged(user)
  if user then
    self.view.user:update({ { "user", user.name }, { "since", os.date("!%Y-%m-%d %H:%M:%S", math.floor(user.since)) } })
  else
    self.view.user:update({ { "user", "nobody" } })
  end
end

function Login:register(name, password)
  local registered, err = services.session:register(name or "", password or "")
  self.view.message.text = err and tostring(err) or ("registered " .. registered)
end

function Login:login(name, password)
  local _, err = services.session:login(name or "", password or "")
  self.view.message.text = err and tostring(err) or "welcome"
end

function Login:logout()
  local _, err = services.session:logout()
  self.view.message.text = err and tostring(err) or "bye"
end

app.push(Login)
