import Foundation

/// The lines a watched process writes to a pipe, each with the monotonic time its chunk arrived:
/// rows that time a change to a line printed by another process read their pipes with it.
enum TimedLines {
    /// Reads `handle` on a thread of its own until the pipe ends, calling `line` with each line
    /// (without its newline) and the arrival time in nanoseconds (CLOCK_MONOTONIC).
    static func read(_ handle: FileHandle, _ line: @escaping @Sendable (String, UInt64) -> Void) {
        Thread.detachNewThread {
            var pending = Data()
            while true {
                let chunk = handle.availableData
                guard !chunk.isEmpty else { return }
                let now = MonotonicClock.nanoseconds()
                pending += chunk
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let text = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
                    line(text, now)
                }
            }
        }
    }
}
