import Foundation
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
        #expect(heard.lines.withLock { $0.allSatisfy { $0["truncated"].isNull } })
    }

    @Test func aLineSplitAcrossReadsIsOneLine() async throws {
        let process = try service.spawn(ProcessSpec(argv: ["sh", "-c", "printf 'first half, '; sleep 0.2; printf 'second half\\r\\nlast'"]))
        let heard = Heard(process)
        process.start()
        #expect(await eventually { heard.exited.withLock { $0 } })
        #expect(heard.texts(of: "stdout") == ["first half, second half", "last"])
        #expect(heard.reports.withLock { $0 } <= 2, "the first half alone is never reported")
    }

    @Test func a100MBWriterWithoutNewlinesStaysBoundedAtMaxBytes() async throws {
        var spec = ProcessSpec(argv: ["head", "-c", "100000000", "/dev/zero"])
        spec.maxBytes = 1 << 20
        let process = try service.spawn(spec)
        let heard = Heard(process)
        process.start()
        #expect(await eventually(timeLimit: 30) { heard.exited.withLock { $0 } })
        #expect(process.outcome?.status == 0, "the 100 MB were all read")
        let lines = heard.lines.withLock { $0 }
        #expect(lines.count == 1, "one line, cut")
        #expect(lines.first.map { if case .bytes(let bytes) = $0["line"] { bytes.count } else { -1 } } == 1 << 20)
        #expect(lines.first?["truncated"] == true)
    }
}
