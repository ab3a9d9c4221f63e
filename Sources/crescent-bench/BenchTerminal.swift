import Foundation
import Glibc

/// A program on a pseudo-terminal of its own: bytes written as typed keys, its frames read back.
final class BenchTerminal {
    private let row: String
    private let master: Int32
    private let process = Process()
    private var pending: [UInt8] = []

    /// Starts `command` with stdin, stdout and stderr on a new `columns` x `rows` terminal.
    init(row: String, command: [String], columns: Int, rows: Int) throws(BenchFailure) {
        self.row = row
        // Glibc's module leaves out the pseudo-terminal functions (they need _XOPEN_SOURCE):
        // looked up in the C library instead.
        typealias OnDescriptor = @convention(c) (Int32) -> Int32
        typealias Name = @convention(c) (Int32, UnsafeMutablePointer<CChar>?, Int) -> Int32
        func symbol<T>(_ name: String, as type: T.Type) -> T? {
            dlsym(UnsafeMutableRawPointer(bitPattern: 0), name).map { unsafeBitCast($0, to: type) }
        }
        guard let openpt = symbol("posix_openpt", as: OnDescriptor.self), let grantpt = symbol("grantpt", as: OnDescriptor.self),
              let unlockpt = symbol("unlockpt", as: OnDescriptor.self), let ptsname = symbol("ptsname_r", as: Name.self) else {
            throw BenchFailure(row: row, reason: "the C library has no posix_openpt")
        }
        master = openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)
        var name = [CChar](repeating: 0, count: 128)
        guard master >= 0, grantpt(master) == 0, unlockpt(master) == 0, ptsname(master, &name, name.count) == 0 else {
            let reason = String(cString: strerror(errno))
            if master >= 0 { close(master) }
            throw BenchFailure(row: row, reason: "cannot open a pseudo-terminal: \(reason)")
        }
        var size = winsize(ws_row: UInt16(rows), ws_col: UInt16(columns), ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(master, UInt(TIOCSWINSZ), &size)
        let slave = open(String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self), O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard slave >= 0 else {
            close(master)
            throw BenchFailure(row: row, reason: "cannot open the pseudo-terminal's other end")
        }
        defer { close(slave) }
        let handle = FileHandle(fileDescriptor: slave, closeOnDealloc: false)
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        process.environment = ProcessInfo.processInfo.environment.merging(["CRESCENT_HISTORY": "/dev/null", "TERM": "xterm-256color"]) { _, new in new }
        process.standardInput = handle
        process.standardOutput = handle
        process.standardError = handle
        do { try process.run() } catch {
            close(master)
            throw BenchFailure(row: row, reason: "cannot start \(command[0]): \(error)")
        }
    }

    func write(_ text: String) {
        var bytes = Array(text.utf8)
        _ = bytes.withUnsafeMutableBytes { Glibc.write(master, $0.baseAddress, $0.count) }
    }

    /// Reads until a frame ends (`CSI ?2026l`); returns the bytes read up to there.
    func readFrame(within seconds: Double) throws(BenchFailure) -> Int {
        let end = Array("\u{1B}[?2026l".utf8)
        let deadline = MonotonicClock.nanoseconds() + UInt64(seconds * 1e9)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            if let count = Self.end(of: end, in: pending) {
                pending.removeFirst(count)
                return count
            }
            let now = MonotonicClock.nanoseconds()
            guard now < deadline else {
                throw BenchFailure(row: row, reason: "no frame within \(seconds) s; read: \(String(decoding: pending.suffix(300), as: UTF8.self).debugDescription)")
            }
            var poller = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32((deadline - now) / 1_000_000) + 1) > 0 else { continue }
            let count = read(master, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw BenchFailure(row: row, reason: "the program's terminal closed before a frame") }
            pending += buffer[..<count]
        }
    }

    /// The index just past the first `marker` in `bytes`, or nil. A plain scan for the marker's
    /// last byte: the generic `firstRange(of:)` took about 100 µs over a 3 KB frame, time the
    /// reader added to the frame it timed (and more to a big frame than to a small one).
    private static func end(of marker: [UInt8], in bytes: [UInt8]) -> Int? {
        guard let last = marker.last, bytes.count >= marker.count else { return nil }
        for index in (marker.count - 1)..<bytes.count where bytes[index] == last {
            if bytes[(index + 1 - marker.count)...index].elementsEqual(marker) { return index + 1 }
        }
        return nil
    }

    /// Presses `q` and waits (up to 5 s) for the program to end, else terminates it.
    func stop() {
        write("q")
        let deadline = Date().addingTimeInterval(5)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while process.isRunning && Date() < deadline {
            var poller = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, 20) > 0 { _ = read(master, &buffer, buffer.count) }
        }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        close(master)
    }
}
