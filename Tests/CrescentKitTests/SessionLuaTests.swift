import CrescentKit
import Testing

/// The session from Lua (issue 7): a read-only `currentUser`, login and logout with their events,
/// and refusals that do not tell a wrong name from a wrong password.
@Suite struct SessionLuaTests {
    @Test func currentUserCannotBeAssignedFromLua() async throws {
        let folder = try StoreScriptRun.DataFolder()
        let run = await StoreScriptRun.run("""
            local session = services.session
            print(session.currentUser)
            print(select(2, pcall(function() session.currentUser = { name = "mallory" } end)))
            print(session.currentUser)
            """, in: folder)
        #expect(run.lines == [
            "nil",
            "test.lua:3: cannot set 'session.currentUser': service properties are read-only (the service updates them; see help(services.session))",
            "nil",
        ], "\(run.stderr)")
        #expect(run.status == 0)
    }

    @Test func registerLoginObserveAndLogout() async throws {
        let folder = try StoreScriptRun.DataFolder()
        let run = await StoreScriptRun.run("""
            local session = services.session
            session:observe("currentUser", function(user) print("current", user and user.name or "nobody") end)
            on("session.didLogin", function(user) print("didLogin", user.name, math.type(user.since)) end)
            session:on("didLogout", function(user) print("didLogout", user.name) end)
            task(function()
              print("register", (session:register("ann", "correct horse")))
              local user, err = session:login("ann", "correct horse")
              print("login", user.name, err, session.currentUser.name)
              print(select(2, pcall(function() user.name = "bob" end)))
              print("change", (session:changePassword("correct horse", "battery staple")))
              print("logout", session:logout().name, session.currentUser)
              local again = session:login("ann", "battery staple")
              print("again", again.name)
              session:logout()
            end)
            """, in: folder)
        let lines = run.lines
        #expect(lines.filter { !$0.hasPrefix("current\t") && !$0.hasPrefix("did") } == [
            "register\tann",
            "login\tann\tnil\tann",
            "test.lua:9: cannot set 'user.name': a user is read-only (it is a snapshot made by its service)",
            "change\ttrue",
            "logout\tann\tnil",
            "again\tann",
        ], "\(run.stdout)\n\(run.stderr)")
        #expect(lines.filter { $0.hasPrefix("current\t") } == ["current\tnobody", "current\tann", "current\tnobody", "current\tann", "current\tnobody"])
        #expect(lines.filter { $0.hasPrefix("did") } == ["didLogin\tann\tinteger", "didLogout\tann", "didLogin\tann\tinteger", "didLogout\tann"])
        #expect(run.status == 0)
    }

    @Test func wrongPasswordAndUnknownNameGetTheSameError() async throws {
        let folder = try StoreScriptRun.DataFolder()
        let run = await StoreScriptRun.run("""
            local session = services.session
            task(function()
              session:register("ann", "correct horse")
              local _, wrong = session:login("ann", "not the password")
              local _, unknown = session:login("nobody", "correct horse")
              print(wrong.code, tostring(wrong))
              print(unknown.code, tostring(unknown))
              print(wrong.message == unknown.message, session.currentUser)
              local _, short = session:register("bob", "short")
              print(tostring(short))
              local _, nobody = session:changePassword("correct horse", "battery staple")
              print(tostring(nobody))
            end)
            """, in: folder)
        #expect(run.lines == [
            "permission\tsession.login: permission: wrong name or password",
            "permission\tsession.login: permission: wrong name or password",
            "true\tnil",
            "session.register: invalid_argument: a password must be at least 8 characters",
            "session.changePassword: permission: nobody is logged in",
        ], "\(run.stderr)")
    }
}
