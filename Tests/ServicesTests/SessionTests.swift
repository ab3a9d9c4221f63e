import Foundation
import GRDB
import Model
@testable import Services
import Synchronization
import Testing

/// The session: accounts, the current user, hashes, and refusals that tell nothing.
@Suite struct SessionTests {
    /// A store and session over one fresh database, with a cheap KDF and short delays.
    static func makeSession(folder: TemporaryFolder, rounds: Int = 1_000, delay: Double = 0,
                            maxDelay: Double = 8, clock: any ServiceClock = SystemClock.shared) throws -> (store: Store, session: Session) {
        var sections: Fields = [
            "session": ["kdf_rounds": .integer(Int64(rounds)), "failure_delay": .number(delay),
                        "max_failure_delay": .number(maxDelay)],
        ]
        // On a manual clock the only jobs are the session's: no file, so no store poller.
        if clock is ManualClock { sections["store"] = ["path": ":memory:"] }
        let services = try Store.make(folder.context(sections, clock: clock))
        return (try #require(services[0] as? Store), try #require(services[1] as? Session))
    }

    @Test func registerLoginLogoutAndTheEventsInOrder() async throws {
        let folder = try TemporaryFolder()
        let (_, session) = try Self.makeSession(folder: folder)
        let log = ChangeLog(session)
        #expect(try session.register("ann", password: "correct horse") == "ann")
        #expect(session.currentUser.value == nil, "registering does not log in")
        let before = Int64(Date().timeIntervalSince1970)
        let user = try await session.login("ann", password: "correct horse")
        #expect(user["name"] == "ann")
        #expect((user["since"].integerValue ?? 0) >= before)
        #expect(session.currentUser.value.map(Value.model) == user)
        #expect(try session.register("bob", password: "battery staple") == "bob")
        let bob = try await session.login("bob", password: "battery staple")
        #expect(session.logout() == bob)
        #expect(session.logout() == nil, "logging out twice is fine")
        #expect(log.names == ["currentUser", "didLogin", "currentUser", "didLogout", "didLogin", "currentUser", "didLogout"])
    }

    @Test func registerRefusesTakenNamesAndShortPasswords() throws {
        let folder = try TemporaryFolder()
        let (_, session) = try Self.makeSession(folder: folder)
        _ = try session.register("ann", password: "correct horse")
        #expect(throws: ServiceError(.invalidArgument, "the name 'ann' is taken")) {
            try session.register("ann", password: "another one")
        }
        #expect(throws: ServiceError(.invalidArgument, "a password must be at least 8 characters")) {
            try session.register("cy", password: "short")
        }
        #expect(throws: ServiceError(.invalidArgument, "a name must have a character that is not a space")) {
            try session.register("", password: "long enough")
        }
    }

    @Test func theDatabaseHoldsSaltedHashesNotPasswords() throws {
        let folder = try TemporaryFolder()
        let (store, session) = try Self.makeSession(folder: folder)
        _ = try session.register("ann", password: "same password")
        _ = try session.register("bob", password: "same password")
        let rows = try store.database.read { db in try Row.fetchAll(db, sql: "SELECT name, salt, hash, kdf, rounds FROM users ORDER BY name") }
        #expect(rows.count == 2)
        let salts = rows.map { Array($0["salt"] as Data) }
        let hashes = rows.map { Array($0["hash"] as Data) }
        #expect(salts.allSatisfy { $0.count == 16 } && salts[0] != salts[1], "a fresh salt per user")
        #expect(hashes.allSatisfy { $0.count == 32 } && hashes[0] != hashes[1], "same password, different hashes")
        #expect(!hashes.contains(Array("same password".utf8)))
        #expect(rows.allSatisfy { ($0["kdf"] as String) == "pbkdf2-sha256" && ($0["rounds"] as Int) == 1_000 })
        let file = try Data(contentsOf: URL(fileURLWithPath: folder.databasePath))
        + ((try? Data(contentsOf: URL(fileURLWithPath: folder.databasePath + "-wal"))) ?? Data())
        #expect(file.range(of: Data("same password".utf8)) == nil, "the password is nowhere in the files")
    }

    @Test func wrongPasswordAndUnknownUserFailAlikeInWordsAndTime() async throws {
        let folder = try TemporaryFolder()
        // A KDF cost that dominates the time, and no failure delay (names are fresh anyway).
        let (_, session) = try Self.makeSession(folder: folder, rounds: 40_000)
        _ = try session.register("ann", password: "correct horse")
        func attempt(_ name: String, _ password: String) async -> (ServiceError?, Double) {
            let started = Date()
            do {
                _ = try await session.login(name, password: password)
                return (nil, Date().timeIntervalSince(started))
            } catch {
                return (error, Date().timeIntervalSince(started))
            }
        }
        var wrongTimes: [Double] = [], unknownTimes: [Double] = []
        for round in 0..<5 {
            let (wrong, wrongTime) = await attempt("ann", "wrong \(round)")
            let (unknown, unknownTime) = await attempt("nobody\(round)", "correct horse")
            #expect(wrong == ServiceError(.permission, "wrong name or password"))
            #expect(unknown == wrong, "the same error, word for word")
            wrongTimes.append(wrongTime)
            unknownTimes.append(unknownTime)
            _ = try await session.login("ann", password: "correct horse")   // resets ann's failures
        }
        // Under a sanitizer the times are the sanitizer's (``Sanitizer``); the errors are checked above.
        guard Sanitizer.active == nil else { return }
        let wrongMedian = wrongTimes.sorted()[2], unknownMedian = unknownTimes.sorted()[2]
        #expect(wrongMedian > 0.002, "the KDF does real work")
        // Within half the larger time plus 20 ms: wall time on a loaded machine is noisy, and the leak
        // this guards against was a factor of five or more (SessionNameTests counts the work itself).
        #expect(abs(wrongMedian - unknownMedian) < max(wrongMedian, unknownMedian) * 0.5 + 0.02,
                "similar times: wrong \(wrongTimes), unknown \(unknownTimes)")
    }

    @Test func repeatedFailuresSlowTheNextAttemptsDown() async throws {
        let folder = try TemporaryFolder()
        let clock = ManualClock()
        let (_, session) = try Self.makeSession(folder: folder, delay: 0.05, maxDelay: 0.1, clock: clock)
        _ = try session.register("ann", password: "correct horse")
        // Each attempt after a failure waits on the clock: it answers only once the clock has
        // moved by exactly its delay (0, 0.05, 0.1 and 0.1, capped), never in real time.
        for (attempt, delay) in [0, 0.05, 0.1, 0.1].enumerated() {
            let login = Task { try? await session.login("ann", password: "wrong password") }
            if delay > 0 {
                #expect(await clock.waitForJob(), "attempt \(attempt + 1) waits on the clock")
                #expect(clock.nextDue == clock.uptime + .seconds(seconds: delay), "attempt \(attempt + 1)")
                clock.advance(by: .seconds(seconds: delay))
            }
            _ = await login.value
            #expect(session.throttle.failures(of: "ann") == attempt + 1)
        }
        #expect((0...4).map(session.throttle.delay(afterFailures:)) == [0, 0.05, 0.1, 0.1, 0.1], "capped")
        let right = Task { try await session.login("ann", password: "correct horse") }
        #expect(await clock.waitForJob(), "even the right password waits its turn")
        clock.advance(by: .milliseconds(99))
        #expect(clock.pendingCount == 1, "not before its delay")
        clock.advance(by: .milliseconds(1))
        _ = try await right.value
        #expect(session.throttle.failures(of: "ann") == 0, "a success starts the count again")
        _ = try? await session.login("ann", password: "wrong again")
        #expect(session.throttle.failures(of: "ann") == 1)
        // Forgotten after 15 minutes without a failure.
        clock.advance(by: .seconds(900))
        #expect(session.throttle.failures(of: "ann") == 0)
    }

    @Test func parallelAttemptsForOneNameWaitForEachOther() async throws {
        let clock = ManualClock()
        let throttle = LoginThrottle(base: 0.05, cap: 1, clock: clock)
        let checked = Checked()
        let attempts = Task {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        _ = try? await throttle.attempt("ann") { () throws(ServiceError) in
                            checked.times.withLock { $0.append(clock.uptime) }
                            return (false, ())
                        }
                    }
                }
            }
        }
        // One at a time, each after the delay its predecessors' failures call for.
        while checked.times.withLock({ $0.count }) < 4 {
            if clock.pendingCount > 0 { clock.advance(by: (clock.nextDue ?? clock.uptime) - clock.uptime) }
            await Task.yield()
        }
        await attempts.value
        #expect(checked.times.withLock { $0 } == [.zero, .milliseconds(50), .milliseconds(150), .milliseconds(350)])
        #expect(throttle.failures(of: "ann") == 4)
        #expect(throttle.delay(afterFailures: 30) == 1, "capped")
    }

    @Test func changePasswordChecksTheOldOneAndNeedsALogin() async throws {
        let folder = try TemporaryFolder()
        let (_, session) = try Self.makeSession(folder: folder)
        _ = try session.register("ann", password: "correct horse")
        await #expect(throws: ServiceError(.permission, "nobody is logged in")) {
            try await session.changePassword(old: "correct horse", new: "battery staple")
        }
        _ = try await session.login("ann", password: "correct horse")
        await #expect(throws: ServiceError(.permission, "wrong name or password")) {
            try await session.changePassword(old: "not it at all", new: "battery staple")
        }
        #expect(try await session.changePassword(old: "correct horse", new: "battery staple") == true)
        _ = session.logout()
        await #expect(throws: ServiceError(.permission, "wrong name or password")) {
            try await session.login("ann", password: "correct horse")
        }
        _ = try await session.login("ann", password: "battery staple")
    }

    @Test func usersPersistAndSessionSettingsAreChecked() async throws {
        let folder = try TemporaryFolder()
        do {
            let (store, session) = try Self.makeSession(folder: folder)
            _ = try session.register("ann", password: "correct horse")
            store.close()
        }
        let (_, session) = try Self.makeSession(folder: folder)
        _ = try await session.login("ann", password: "correct horse")
        #expect(throws: ServiceError(.invalidArgument, "[session] kdf_rounds must be an integer in [1, 100000000]")) {
            try SessionSettings(["kdf_rounds": 0])
        }
        #expect(throws: ServiceError(.invalidArgument, "[session] failure_delay must be a number of seconds in [0, 60]")) {
            try SessionSettings(["failure_delay": "fast"])
        }
        #expect(try SessionSettings(.object([:])).kdfRounds == 600_000)
    }
}

/// When each attempt was checked, on the test's clock.
private final class Checked: Sendable {
    let times = Mutex<[Duration]>([])
}
