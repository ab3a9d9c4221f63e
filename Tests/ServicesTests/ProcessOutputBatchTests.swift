import Foundation
import Glibc
import Model
@testable import Services
import Synchronization
import Testing

/// A spawned program's lines reach the host in batches, one report per wake-up of the reader
/// (``ModelChange/events(name:payloads:)``), with every line whole, in order, with its stream.
@Suite struct ProcessOutputBatchTests {
    let service = ProcessService()

    /// What a spawned program reported: its `didOutput` payloads in order, how many reports
    /// carried them, and whether it exited.
    final class Heard: Sendable {
        let lines = Mutex<[Value]>([])
        let reports = Mutex(0)
        let exited = Mutex(false)

        init(_ process: SpawnedProcess) {
            process.changes.attach { change in
                let payloads = change.outputLines
                if !payloads.isEmpty {
                    self.reports.withLock { $0 += 1 }
                    self.lines.withLock { $0 += payloads }
                }
                if case .event("didExit", _) = change { self.exited.withLock { $0 = true } }
            }
        }

        func texts(of stream: String) -> [String] {
            lines.withLock { $0.filter { $0["stream"].stringValue == stream }.map(\.lineText) }
        }
    }

    @Test func theLinesOfOneReadComeAsOneReportInOrderWithTheirStream() async throws {
        let process = try service.spawn(ProcessSpec(argv: ["sh", "-c", "seq 1 20000; echo problem >&2; printf 'no newline'"]))
        let heard = Heard(process)
        process.start()
        #expect(await eventually(timeLimit: 20) { heard.exited.withLock { $0 } })
        #expect(heard.texts(of: "stdout") == (1...20000).map(String.init) + ["no newline"], "every line, whole and in order, the last one too")
        #expect(heard.texts(of: "stderr") == ["problem"])
        let reports = heard.reports.withLock { $0 }
        #expect(reports < 200, "20,002 lines in \(reports) reports: a report per read, not per line")
        #expect(heard.lines.withLock { $0.allSatisfy { $0["truncated"] == false } }, "no line was cut")
    }

    @Test func aLineSplitAcrossReadsIsOneLine() async throws {
        let process = try service.spawn(ProcessSpec(argv: ["sh", "-c", "printf 'first half, '; sleep 0.2; printf 'second half\\r\\nlast'"]))
        let heard = Heard(process)
        process.start()
        #expect(await eventually { heard.exited.withLock { $0 } })
        #expect(heard.texts(of: "stdout") == ["first half, second half", "last"])
        #expect(heard.reports.withLock { $0 } <= 2, "the first half alone is never reported")
    }

    /// Issue 38: a program ended by SIGTERM while a worker of its group still held the pipe
    /// lost its last line without a newline (the group's grace kept the pipe open, so no end of
    /// file came before the exit was reported, and lines were not taken after it).
    @Test func theLastLineWithoutNewlineOfAProgramEndedByTermIsDelivered() async throws {
        let clock = ManualClock()
        let service = ProcessService(clock: clock)
        // The worker ignores SIGTERM and holds the pipe through the grace; the shell heeds it.
        let process = try service.spawn(ProcessSpec(argv: ["sh", "-c", "(trap '' TERM; exec sleep 30) & printf 'last words'; wait"]))
        let heard = Heard(process)
        let exitedFirst = Mutex<Bool?>(nil)
        process.changes.attach { change in
            if case .event("didExit", _) = change { exitedFirst.withLock { $0 = $0 ?? heard.lines.withLock { $0.isEmpty } } }
        }
        process.start()
        #expect(await eventually { processes(inGroup: process.pid).count >= 2 })
        try await Task.sleep(for: .milliseconds(200))
        process.kill(signal: SIGTERM)
        #expect(await eventually { heard.exited.withLock { $0 } })
        #expect(process.outcome?.signal == "SIGTERM")
        #expect(heard.texts(of: "stdout") == ["last words"], "the line is delivered with the exit, not lost to the grace")
        #expect(exitedFirst.withLock { $0 } == false, "the line comes before didExit")
        _ = clock.advance(by: .seconds(ProcessSpec.defaultKillGrace))
        #expect(await eventually { processes(inGroup: process.pid).isEmpty }, "the worker is killed after the grace")
    }

    @Test func a100MBWriterWithoutNewlinesStaysBoundedAtMaxBytes() async throws {
        var spec = ProcessSpec(argv: ["head", "-c", "100000000", "/dev/zero"])
        spec.maxBytes = 1 << 20
        let process = try service.spawn(spec)
        let heard = Heard(process)
        process.start()
        // A sanitizer slows reading the 100 MB past 30 s on a loaded machine.
        #expect(await eventually(timeLimit: Sanitizer.active == nil ? 30 : 300) { heard.exited.withLock { $0 } })
        #expect(process.outcome?.status == 0, "the 100 MB were all read")
        let lines = heard.lines.withLock { $0 }
        #expect(lines.count == 1, "one line, cut")
        #expect(lines.first.map { if case .bytes(let bytes) = $0["line"] { bytes.count } else { -1 } } == 1 << 20)
        #expect(lines.first?["truncated"] == true)
    }
}
