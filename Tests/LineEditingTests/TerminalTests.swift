#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LineEditing
import Testing

/// Raw mode, window size and writing, on a pseudo-terminal.
@Suite struct TerminalTests {
    /// A pseudo-terminal pair: the controlling side and the terminal side.
    private final class PseudoTerminal {
        struct Failure: Error {
            let code: Int32
        }

        let controller: Int32
        let device: Int32

        init() throws {
            let controller = open("/dev/ptmx", O_RDWR | O_NOCTTY)
            guard controller >= 0 else { throw Failure(code: errno) }
            #if os(Linux)
            // Glibc's module hides posix_openpt and friends; these are their ioctls (asm-generic
            // numbers, the same on x86-64 and arm64): TIOCSPTLCK unlocks, TIOCGPTN names the device.
            var unlock: Int32 = 0
            var number: UInt32 = 0
            guard ioctl(controller, 0x4004_5431, &unlock) == 0, ioctl(controller, 0x8004_5430, &number) == 0 else {
                close(controller)
                throw Failure(code: errno)
            }
            let name = "/dev/pts/\(number)"
            #else
            guard grantpt(controller) == 0, unlockpt(controller) == 0, let pointer = ptsname(controller) else {
                close(controller)
                throw Failure(code: errno)
            }
            let name = String(cString: pointer)
            #endif
            let device = open(name, O_RDWR | O_NOCTTY)
            guard device >= 0 else {
                close(controller)
                throw Failure(code: errno)
            }
            self.controller = controller
            self.device = device
        }

        deinit {
            close(device)
            close(controller)
        }
    }

    @Test func rawModeAndRestore() throws {
        let pty = try PseudoTerminal()
        let terminal = Terminal(input: pty.device, output: pty.device)
        #expect(terminal.isInteractive)
        #expect(!terminal.isRaw)
        let saved = try terminal.enableRawMode()
        #expect(terminal.isRaw)
        var attributes = termios()
        tcgetattr(pty.device, &attributes)
        #expect(attributes.c_iflag & tcflag_t(ICRNL | IXON) == 0)
        #expect(attributes.c_oflag & tcflag_t(OPOST) != 0, "output processing stays on")
        terminal.restore(saved)
        #expect(!terminal.isRaw)
    }

    @Test func bytesTypedReachTheReaderOneKeyAtATime() throws {
        let pty = try PseudoTerminal()
        let terminal = Terminal(input: pty.device, output: pty.device)
        let saved = try terminal.enableRawMode()
        defer { terminal.restore(saved) }
        let typed = Array("\u{3}x\r".utf8)
        _ = typed.withUnsafeBytes { write(pty.controller, $0.baseAddress, $0.count) }
        #expect(terminal.read() == typed, "Ctrl-C is a byte, CR is not turned into LF")
        terminal.write("> ok")
        var echoed = [UInt8](repeating: 0, count: 16)
        let count = echoed.withUnsafeMutableBytes { read(pty.controller, $0.baseAddress, $0.count) }
        #expect(Array(echoed[..<max(count, 0)]) == Array("> ok".utf8), "and no echo of the typed keys")
    }

    @Test func windowSize() throws {
        let pty = try PseudoTerminal()
        var size = winsize()
        size.ws_col = 132
        size.ws_row = 43
        #expect(ioctl(pty.controller, UInt(TIOCSWINSZ), &size) == 0)
        let terminal = Terminal(input: pty.device, output: pty.device)
        #expect(terminal.windowSize()?.columns == 132)
        #expect(terminal.windowSize()?.rows == 43)
        #expect(terminal.columns == 132)
    }

    @Test func notATerminal() throws {
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        defer { close(descriptors[0]); close(descriptors[1]) }
        let terminal = Terminal(input: descriptors[0], output: descriptors[1])
        #expect(!terminal.isInteractive)
        #expect(terminal.windowSize() == nil)
        let error = #expect(throws: TerminalError.self) { try terminal.enableRawMode() }
        #expect(error?.description.hasPrefix("cannot set up the terminal: tcgetattr: ") == true)
    }
}
