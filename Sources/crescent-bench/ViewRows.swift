import CrescentKit
import LuaBridge
import Model
import NIOCore
import NIOEmbedded
import Synchronization

/// The rows of controllers and views: rendering one changed cell of a 100-row table,
/// and pushing and popping a controller that owns three subscriptions.
enum ViewRows {
    // MARK: render

    /// The rows of the table, as Lua builds them and as the Swift baseline holds them.
    static let rowCount = 100

    static func cells(row: Int) -> [String] {
        ["\(row)", "item \(row)", "\(row * 3)", "note \(row % 7)"]
    }

    static let renderSource = """
        local rows = {}
        for i = 1, \(rowCount) do rows[i] = { id = i, name = "item " .. i, qty = i * 3, note = "note " .. (i % 7) } end
        local Bench = controller("Bench")
        function Bench:loadView()
          return view.table{ id = "t", columns = { "id", "name", "qty", "note" }, rows = rows }
        end
        local ctl = app.push(Bench)
        local t
        function update(i)
          t = t or ctl.view.t
          t:set(i % \(rowCount) + 1, "qty", i % 900 + 100)
        end
        """

    /// One `tbl:set(row, "qty", value)` and the loop turn that renders it (plain mode, output
    /// captured: no terminal I/O), per update, against building the same 100-row text with a
    /// Swift string join.
    static func render() throws(BenchFailure) -> BenchRow {
        let bench = try RenderHost(row: "render")
        try bench.run(renderSource)
        let update = bench.global("update")
        var baseline = TextTable(rows: (1...rowCount).map(cells), rightAligned: [true, false, true, false],
                                 titles: ["id", "name", "qty", "note"])
        guard bench.lastRender == baseline.text() + "\n\n" else {
            throw BenchFailure(row: "render", reason: "the first render differs from the baseline's text:\n\(bench.lastRender ?? "none")")
        }
        let perRound = 200
        var next = 0
        var baselineNext = 0
        var sink = 0
        let samples = try PairedSamples.collect(
            rounds: 40, warmups: 5,
            subject: { () throws(BenchFailure) -> Double in
                try MonotonicClock.time { () throws(BenchFailure) -> Void in
                    for _ in 0..<perRound {
                        let i = next
                        next += 1
                        try bench.turn { (vm: LuaVM) throws(LuaError) -> Void in _ = try vm.call(update, Int64(i)) }
                    }
                } / Double(perRound) / 1000
            },
            baseline: { () throws(BenchFailure) -> Double in
                MonotonicClock.time { () -> Void in
                    for _ in 0..<perRound {
                        let i = baselineNext
                        baselineNext += 1
                        baseline.cells[i % rowCount][2] = String(i % 900 + 100)
                        sink &+= baseline.text().utf8.count
                    }
                } / Double(perRound) / 1000
            }
        )
        // Both sides made the same updates: the last render is the baseline's text.
        guard next == baselineNext, bench.lastRender == baseline.text() + "\n\n" else {
            throw BenchFailure(row: "render", reason: "the rendered table differs from the baseline's text:\n\(bench.lastRender ?? "none")\n---\n\(baseline.text())")
        }
        guard bench.renders == next + 1 else {
            throw BenchFailure(row: "render", reason: "\(bench.renders) renders for \(next) updates (expected one each, plus the first)")
        }
        _ = sink
        return BenchRow(name: "render", value: Statistics.minimum(samples.subject), baseline: Statistics.minimum(samples.baseline),
                        unit: "µs", goal: .ratioAtMost(3),
                        note: "tbl:set on a \(rowCount)-row table + one loop turn (plain mode, captured output), \(perRound) per round, best of 40; baseline: the same text by a Swift string join")
    }

    /// The baseline: a table of strings laid out by padding and joining, as simply as it gets.
    struct TextTable {
        var cells: [[String]]
        let rightAligned: [Bool]
        let titles: [String]
        let widths: [Int]

        init(rows: [[String]], rightAligned: [Bool], titles: [String]) {
            cells = rows
            self.rightAligned = rightAligned
            self.titles = titles
            // Every value the bench sets has three digits, like the widest initial qty (300).
            widths = titles.indices.map { column in rows.reduce(titles[column].count) { max($0, $1[column].count) } }
        }

        func line(_ texts: [String]) -> String {
            var parts: [String] = []
            parts.reserveCapacity(texts.count)
            for (index, text) in texts.enumerated() {
                let padding = String(repeating: " ", count: max(widths[index] - text.count, 0))
                if index == texts.count - 1 && !rightAligned[index] {
                    parts.append(text)
                } else {
                    parts.append(rightAligned[index] ? padding + text : text + padding)
                }
            }
            return parts.joined(separator: "  ")
        }

        func text() -> String {
            var lines: [String] = []
            lines.reserveCapacity(cells.count + 2)
            lines.append(line(titles))
            lines.append(widths.map { String(repeating: "─", count: $0) }.joined(separator: "  "))
            for row in cells { lines.append(line(row)) }
            return lines.joined(separator: "\n")
        }
    }

    // MARK: push-pop

    static let pushPopSource = """
        local svc = services.bench
        local deallocs = 0
        local Owner = controller("Owner")
        function Owner:loadView() return view.text("owner") end
        function Owner:viewWillAppear()
          self:observe(svc, "value", function() end)
          self:observe(svc, "value", "changed")
          self:on("ping", function() end)
        end
        function Owner:changed() end
        function Owner:dealloc() deallocs = deallocs + 1 end
        function cycle(n)
          for i = 1, n do
            app.push(Owner)
            app.pop()
          end
        end
        function bare(n)
          local h = function() end
          for i = 1, n do
            local a = observe(svc, "value", h)
            local b = observe(svc, "value", h)
            local c = on("ping", h)
            a:cancel() b:cancel() c:cancel()
          end
        end
        function counts() return deallocs, #subscriptions() end
        """

    /// `app.push` then `app.pop` of a controller observing a property twice and a notification
    /// once from viewWillAppear (all three end at viewDidDisappear), per cycle. Baseline (no goal):
    /// the same three subscriptions made and cancelled by hand.
    static func pushPop() throws(BenchFailure) -> BenchRow {
        let bench = try BenchHost(row: "push-pop")
        try bench.run(pushPopSource)
        let (_, subscriptionsBefore) = try counts(bench)
        let n: Int64 = 500
        var cycles: Int64 = 0
        let samples = try PairedSamples.collect(
            rounds: 30, warmups: 3,
            subject: { () throws(BenchFailure) in
                cycles += n
                return try MonotonicClock.time { () throws(BenchFailure) in
                    try bench.call("cycle", n)
                    try bench.drain()
                } / Double(n) / 1000
            },
            baseline: { () throws(BenchFailure) in
                try MonotonicClock.time { () throws(BenchFailure) in
                    try bench.call("bare", n)
                    try bench.drain()
                } / Double(n) / 1000
            }
        )
        let (deallocs, subscriptionsAfter) = try counts(bench)
        guard deallocs == cycles else {
            throw BenchFailure(row: "push-pop", reason: "\(deallocs) controllers deallocated after \(cycles) push/pop cycles")
        }
        guard subscriptionsAfter == subscriptionsBefore else {
            throw BenchFailure(row: "push-pop", reason: "\(subscriptionsAfter) live subscriptions after the cycles, \(subscriptionsBefore) before")
        }
        return BenchRow(name: "push-pop", value: Statistics.minimum(samples.subject), baseline: Statistics.minimum(samples.baseline),
                        unit: "µs", goal: .informational,
                        note: "\(n) push+pop cycles per round (3 owned subscriptions each), best of 30; baseline: the 3 subscriptions made and cancelled by hand")
    }

    private static func counts(_ bench: BenchHost) throws(BenchFailure) -> (Int64, Int64) {
        let stack = bench.vm.stack
        _ = bench.vm.getGlobal("counts")
        do { try bench.vm.call(arguments: 0, results: 2) } catch {
            throw BenchFailure(row: bench.row, reason: error.message)
        }
        let result = (stack.integer(at: -2) ?? -1, stack.integer(at: -1) ?? -1)
        stack.pop(2)
        return result
    }
}

/// A host like `BenchHost` whose console keeps the last text written to stdout (the latest
/// render), so the render row can check it against its baseline. Runs Lua in loop turns.
final class RenderHost {
    let loop = EmbeddedEventLoop()
    let host: Host
    let row: String
    private let output = Output()

    final class Output: Sendable {
        let last = Mutex<String?>(nil)
        let count = Mutex(0)
        let errors = Mutex("")
    }

    init(row: String) throws(BenchFailure) {
        self.row = row
        let output = self.output
        let console = Console(colors: false) { stream, text in
            switch stream {
            case .output:
                output.last.withLock { $0 = text }
                output.count.withLock { $0 += 1 }
            case .error:
                output.errors.withLock { $0 += text }
            }
        }
        do {
            host = try Host(loop: loop, options: HostOptions(), console: console,
                            plugins: [BenchPlugin(service: BenchService())]) { _ in }
        } catch {
            throw BenchFailure(row: row, reason: "cannot start a host: \(error)")
        }
    }

    var vm: LuaVM { host.vm }
    var lastRender: String? { output.last.withLock { $0 } }
    var renders: Int { output.count.withLock { $0 } }

    /// Runs `source` as the main chunk (with a keep-alive timer), then every queued turn.
    func run(_ source: String) throws(BenchFailure) {
        host.runMain(source: Array(("keepalive = timer.every(3600, function() end)\n" + source).utf8),
                     chunkName: "=\(row)", scriptPath: nil)
        try drain()
    }

    /// Runs `body` as one loop turn (the turn's end renders), then every queued job.
    func turn(_ body: @escaping (LuaVM) throws(LuaError) -> Void) throws(BenchFailure) {
        let output = self.output
        host.enqueue { host in
            do throws(LuaError) { try body(host.vm) } catch {
                output.errors.withLock { $0 += error.message }
            }
        }
        try drain()
    }

    func drain() throws(BenchFailure) {
        loop.run()
        let reported = output.errors.withLock { $0 }
        guard reported.isEmpty, host.isRunning else {
            throw BenchFailure(row: row, reason: reported.isEmpty ? "the host stopped" : reported)
        }
    }

    func global(_ name: String) -> LuaRef {
        _ = vm.getGlobal(name)
        return vm.ref()
    }
}
