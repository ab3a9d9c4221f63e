import Model

extension Session: DeclaredService {
    static let serviceName = "session"

    /// What scripts see of the session: `currentUser`, the account methods and the events.
    ///
    /// `register`, `login` and `changePassword` derive a slow hash, so they run in a Swift task
    /// off the loop; `logout` answers on the loop (its completion still runs on a later turn).
    static let declaration: AnyInterface = Interface<Session>(
        name: serviceName, summary: "Registered users and the one logged in."
    ) { d in
        d.property("currentUser", type: "user {name, since} or nil",
                   "Who is logged in (since: Unix seconds of the login); nil when nobody is.") { $0.currentUser.value.value }
        d.method("register", [.init("name", .string, "1 to 64 characters (at most 256 bytes); a name that looks like a registered one is taken."),
                              .init("password", .string, "At least [session] min_password_length characters (8).")],
                 returns: "a string, the name", "Creates a user (it does not log in); invalid_argument when the name is taken.") { session, arguments async throws(ServiceError) in
            try session.register(UserName.text(arguments[0], "the name"), password: UserName.text(arguments[1], "the password"))
        }
        d.method("login", [.init("name", .string, "The user's name."), .init("password", .string, "The password.")],
                 returns: "the current user {name, since}",
                 "Logs a user in, replacing the current one; a wrong name or password is permission (and slows the next tries).") { session, arguments async throws(ServiceError) in
            try await session.login(UserName.text(arguments[0], "the name"), password: UserName.text(arguments[1], "the password"))
        }
        d.method("logout", [], returns: "the user logged out, or nil", "Logs the current user out.",
                 immediate: { session, _ throws(ServiceError) in session.logout() })
        d.method("changePassword", [.init("old", .string, "The current password."), .init("new", .string, "The new password.")],
                 returns: "true", "Changes the current user's password (permission when nobody is logged in or old is wrong).") { session, arguments async throws(ServiceError) in
            try await session.changePassword(old: UserName.text(arguments[0], "the old password"), new: UserName.text(arguments[1], "the new password"))
        }
        d.event("didLogin", payload: "user {name, since}", "A user logged in.")
        d.event("didLogout", payload: "user {name, since}", "The current user logged out (or was replaced by another login).")
    }.erased
}
