import Foundation
import Testing

/// The gpsd provider, started while the script holds every file it may open, connects at once:
/// the descriptors kept for the host are its. Before, the script took them all, the provider
/// failed with `io` and connected only once the script's files were closed (and libdispatch's
/// worker monitor, which needs a descriptor every second, could stop the run by SIGILL).
@Suite struct GpsdDescriptorLimitTests {
    static let script = #"""
        local files, refusal = {}, nil
        for _ = 1, 200 do
          local file, message = io.open("script.lua")
          if not file then refusal = message break end
          files[#files + 1] = file
        end
        print("refused", #files > 0 and refusal:find("kept for crescent itself", 1, true) ~= nil)
        local L = services.location
        L:on("didFail", function(e) print("didFail", e.code) end)
        L:on("didUpdateLocations", function(fixes)
          print("fix", fixes[1].lat)
          L:stop()
          for _, file in ipairs(files) do file:close() end
          app.exit(0)
        end)
        L:start()
        timer.after(15, function() print("no fix"); L:stop() end)
        """#

    /// A gpsd stand-in: sends one TPV report to whoever connects, on a port it prints.
    static let server = #"""
        import socket, sys, time
        s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
        print(s.getsockname()[1], flush=True)
        s.settimeout(30)
        while True:
            c, _ = s.accept()
            c.sendall(b'{"class":"TPV","mode":3,"time":"2024-06-15T12:00:00Z","lat":48.5,"lon":2.25}\n')
            time.sleep(0.5); c.close()
        """#

    @Test func gpsdConnectsWhileTheScriptHoldsAllItMay() async throws {
        let gpsd = Process()
        gpsd.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        gpsd.arguments = ["40", "python3", "-c", Self.server]
        let output = Pipe()
        gpsd.standardOutput = output
        try gpsd.run()
        defer { gpsd.terminate() }
        let portLine = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        let port = try #require(Int(portLine.trimmingCharacters(in: .whitespacesAndNewlines)))
        let sandbox = try Sandbox()
        try sandbox.write("script.lua", Self.script)
        let result = try await crescent(
            ["--nofile=80", CrescentProcess.binaryPath, "--location", "gpsd:127.0.0.1:\(port)", "script.lua"],
            executable: "/usr/bin/prlimit", in: sandbox, timeLimit: 30)
        #expect(!result.killedBySignal && result.stderrShowsNoCrash, "\(result)")
        #expect(result.stdoutLines == ["refused\ttrue", "fix\t48.5"], "\(result)")
    }
}
