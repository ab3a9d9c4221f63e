import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Ctrl-C on a plain run (`crescent script.lua`) around what `io.popen` and `os.execute` started
/// (issue 32's last attack): an `io.popen` program that ignores SIGINT outlived the host's forced
/// exit and held its caller's pipe (`crescent x.lua | cat` never ended); a Ctrl-C that only
/// `os.execute`'s program saw ended the program while the run went on and ended 0; and one that
/// came while the host was closing, waiting for an `io.popen` left open, ended the run 0. Each test
/// starts crescent in a process group of its own and sends SIGINT to the whole group, as a
/// terminal does.
@Suite struct HardeningRunInterruptTests {
    /// Starts `crescent script.lua` with `source` in a process group of its own.
    private static func start(_ source: String) throws -> (CrescentProcess, Sandbox) {
        let sandbox = try Sandbox()
        _ = try sandbox.write("script.lua", source)
        let process = CrescentProcess(["script.lua"], directory: sandbox.path, processGroup: true)
        try process.start()
        return (process, sandbox)
    }

    /// The pid the script's program wrote to `popen.pid` once it is running `sleep`, else nil.
    private static func sleeper(in sandbox: Sandbox) -> Int32? {
        guard let text = try? String(contentsOfFile: sandbox.path + "/popen.pid", encoding: .utf8),
              let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)),
              (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) == "sleep\n" else { return nil }
        return pid
    }

    /// Whether `pid` still runs (a zombie counts as ended).
    private static func isAlive(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return !stat[stat.index(close, offsetBy: 2)...].hasPrefix("Z")
    }

    /// Whether the main thread of `pid` waits in `wait4` (`pclose` and `system` wait there), read
    /// from /proc/PID/syscall; on another architecture, true after a second.
    private static func waitsForAChild(_ pid: Int32, since started: Date) -> Bool {
        #if arch(x86_64)
        let wait4 = "61 "
        #elseif arch(arm64)
        let wait4 = "260 "
        #else
        return Date().timeIntervalSince(started) > 1
        #endif
        return (try? String(contentsOfFile: "/proc/\(pid)/syscall", encoding: .utf8))?.hasPrefix(wait4) == true
    }

    @Test func aForcedExitEndsWhatIoPopenStarted() async throws {
        // The program ignores SIGINT, so the Ctrl-C leaves it running and the script stuck reading
        // it: the host exits by force after its grace period.
        let (process, sandbox) = try Self.start("""
            local program = io.popen("trap '' INT; echo $$ > popen.pid; exec sleep 60")
            print("ready")
            io.stdout:flush()
            program:read("a")
            """)
        var sleeper: Int32?
        #expect(await waitUntil { sleeper = Self.sleeper(in: sandbox); return sleeper != nil }, "\(process.stderr)")
        defer { if let sleeper { kill(sleeper, SIGKILL) } }
        process.send(SIGINT, expecting: .handled, toGroup: true)
        let result = await process.finish(timeLimit: 60)
        #expect(result.status == 130 && !result.killedBySignal, "\(result)")
        #expect(result.stderr.contains("did not stop within"), "\(result)")
        let pid = try #require(sleeper)
        #expect(await waitUntil(seconds: 5) { !Self.isAlive(pid) }, "io.popen's program \(pid) outlived the host")
    }

    @Test func aCtrlCThatEndedOsExecutesProgramStopsTheRun() async throws {
        let (process, sandbox) = try Self.start("""
            print("ready")
            io.stdout:flush()
            local ok, how, code = os.execute("echo $$ > popen.pid; exec sleep 30")
            print("went on", how, code)
            """)
        #expect(await waitUntil { Self.sleeper(in: sandbox) != nil }, "\(process.stderr)")
        process.send(SIGINT, expecting: .handled, toGroup: true)
        let result = await process.finish(timeLimit: 60)
        #expect(result.status == 130 && !result.killedBySignal, "\(result)")
        #expect(!result.stdout.contains("went on"), "\(result)")
        #expect(result.elapsed < 20, "\(result)")
    }

    /// The Ctrl-C that only `os.execute`'s program saw stopped the running code on the loop and
    /// then again, late, from the signals' queue, where it could land in the teardown the first
    /// had begun: a controller's `viewDidDisappear` was cut short and the run printed "error while
    /// tearing down: … interrupted" (2 of 6 runs before). The program here ends itself by SIGINT.
    @Test func aCtrlCThatOnlyOsExecutesProgramSawLetsTheTeardownRun() async throws {
        let source = """
            local C = controller("C")
            function C:loadView() return view.text { text = "x" } end
            function C:viewDidAppear()
              os.execute("kill -INT $$")
              print("went on")
            end
            function C:viewDidDisappear()
              local t = os.clock() + 0.3 while os.clock() < t do end
              print("disappeared")
            end
            app.push(C)
            """
        for _ in 0..<12 {
            let (process, sandbox) = try Self.start(source)
            defer { withExtendedLifetime(sandbox) {} }
            let result = await process.finish(timeLimit: 60)
            #expect(result.status == 130 && !result.killedBySignal, "\(result)")
            #expect(result.stdout == "disappeared\n", "\(result)")
            #expect(!result.stderr.contains("tearing down"), "\(result)")
            if result.stdout != "disappeared\n" || result.stderr.contains("tearing down") { break }
        }
    }

    @Test func aCtrlCWhileTheHostClosesOnAnOpenPopenEnds130() async throws {
        let (process, sandbox) = try Self.start("""
            KEPT = io.popen("echo $$ > popen.pid; exec sleep 30")
            print("ready")
            """)
        let started = Date()
        #expect(await waitUntil { Self.sleeper(in: sandbox) != nil && Self.waitsForAChild(process.pid, since: started) },
                "\(process.stderr)")
        process.send(SIGINT, expecting: .handled, toGroup: true)
        let result = await process.finish(timeLimit: 60)
        #expect(result.status == 130 && !result.killedBySignal, "\(result)")
        #expect(result.stdout == "ready\n", "\(result)")
        #expect(result.elapsed < 20, "\(result)")
    }
}
