import CPlatform
import CrescentKit
import Glibc

/// `crescent-bench [--json] [--only NAME,...]`: measures the bridge's costs against plain-C and
/// `lua5.4` baselines measured in the same run, and says whether each goal (issues 2 and 3) is met.
///
/// Exit status: 0 when every selected row was measured (met goals or not), 1 when a row could not
/// be measured, 2 for a usage error.
enum BenchCommand {
    /// Every row, in the order they run and print.
    /// (A computed property: a stored static array of closures would be shared mutable state.)
    static var rows: [(name: String, run: () throws(BenchFailure) -> BenchRow)] {
        [
            (CallBench.name, CallBench.run),
            (CallbackBench.name, CallbackBench.run),
            (StartupBench.name, StartupBench.run),
            (StartupBench.scriptName, StartupBench.runScript),
            (StartupPluginsBench.name, StartupPluginsBench.run),
            (StartupPluginsBench.usedName, StartupPluginsBench.runUsed),
            ("property", ModelRows.property),
            ("deliver", ModelRows.deliver),
            ("fanout", ModelRows.fanout),
            ("await", ModelRows.await),
            ("convert", ModelRows.convert),
            ("plugin-call", PluginRows.pluginCall),
            ("process-call", PluginRows.processCall),
            ("sandbox-start", PluginRows.sandboxStart),
            ("subscribe", ModelRows.subscribe),
            ("subscription-bytes", ModelRows.subscriptionBytes),
            ("render", ViewRows.render),
            ("list-apply", ListApplyRow.run),
            ("push-pop", ViewRows.pushPop),
            ("key-to-frame", KeyRows.keyToFrame),
            ("key-to-frame-pty", KeyRows.keyToFramePty),
            ("key-bytes", KeyRows.keyBytes),
            ("store-add", StoreRows.add),
            ("store-change", StoreRows.change),
            ("store-add-pg", StorePostgresRows.add),
            ("store-propagate-pg", StorePostgresRows.propagate),
            ("geocode-reverse", GeocoderRows.reverse),
            ("geocode-load", GeocoderRows.load),
            ("geocode-agreement", GeocoderRows.agreement),
            ("geocode-batch", GeocoderRows.batch),
            ("http-get", HTTPRows.get),
            ("feed-parse", FeedRows.parse),
            (TestRunnerBench.name, TestRunnerBench.run),
            (TestRunnerCoverageBench.name, TestRunnerCoverageBench.run),
            ("remote-eval", RemoteRows.eval),
            ("process-run", ProcessRows.run),
            ("process-lines", ProcessRows.lines),
            ("process-line-events", ProcessRows.lineEvents),
            ("watch-latency", WatchLatencyRow.run),
        ]
    }

    static func main() -> Int32 {
        let options: BenchOptions
        do {
            options = try BenchOptions.parse(Array(CommandLine.arguments.dropFirst()), validRows: rows.map(\.name))
        } catch {
            writeError("crescent-bench: \(error.message)\n\(BenchOptions.usage)\n")
            return 2
        }
        if options.help {
            print("\(BenchOptions.usage)\nrows: \(rows.map(\.name).joined(separator: ", "))")
            return 0
        }
        // The rows that run a host in this process run it on malloc as the crescent binary sets it
        // up (a script that builds many tables would otherwise spend time in mprotect here only).
        ProcessTuning.apply()
        var measured: [BenchRow] = []
        var failed = false
        for row in rows where options.only?.contains(row.name) ?? true {
            do {
                measured.append(try row.run())
            } catch {
                writeError("crescent-bench: \(error)\n")
                failed = true
            }
        }
        print(options.json ? Report.json(measured) : Report.table(measured), terminator: "")
        return failed ? 1 : 0
    }

    private static func writeError(_ text: String) {
        var text = text
        text.withUTF8 { bytes in bytes.withMemoryRebound(to: CChar.self) { crescent_write_stderr($0.baseAddress, $0.count) } }
    }
}

exit(BenchCommand.main())
