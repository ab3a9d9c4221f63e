#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The few process-level facts and effects the command line needs.
enum ProcessIO {
    static func isTerminal(_ descriptor: Int32) -> Bool { isatty(descriptor) == 1 }

    static func environment(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

    static func writeOut(_ text: String) { write(Array(text.utf8), to: 1) }
    static func writeError(_ text: String) { write(Array(text.utf8), to: 2) }
    /// Writes text to `descriptor`, whole (a copy of stdout kept apart from it, as `crescent test
    /// -o json` keeps its report).
    static func write(_ text: String, descriptor: Int32) { write(Array(text.utf8), to: descriptor) }
    /// Writes bytes that need not be UTF-8 (a script's output) to stdout, as they are.
    static func writeOut(bytes: [UInt8]) { write(bytes, to: 1) }
    /// Writes bytes that need not be UTF-8 to stderr, as they are.
    static func writeError(bytes: [UInt8]) { write(bytes, to: 2) }

    static func exit(_ status: Int32) -> Never {
        fflush(nil)
        Glibc.exit(status)
    }

    private static func write(_ bytes: [UInt8], to descriptor: Int32) {
        fflush(nil)
        bytes.withUnsafeBufferPointer { bytes in
            var offset = 0
            while offset < bytes.count {
                // Invariant: offset < count, so the buffer is not empty and has a base address.
                let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written <= 0 { return }
                offset += written
            }
        }
    }
}
