import Foundation

/// One test's result as `crescent test` reports it.
struct SpecResult: Sendable {
    /// Busted's four outcomes: an error is anything but an assertion failing in the test's body
    /// (the summary counts it with the failures).
    enum Status: String, Sendable {
        case passed, failed, error, pending
    }

    /// The spec file.
    let file: String
    /// The full name: the describe blocks' names and the test's.
    let name: String
    /// `spec/x_spec.lua:12`, where the test was declared.
    let location: String
    let status: Status
    /// Why it failed: the assertion with its `file:line` and differences, or the traceback.
    let message: String
    /// What the test printed.
    let output: String
    /// Real time the test took, for the JUnit report.
    let seconds: Double

    /// A result whose message's traceback has the spec's frames first and the host's
    /// (`[crescent testing]:58`, `[C]: in function 'error'`) folded into one line after them, as
    /// a script's are.
    init(file: String, name: String, location: String, status: Status, message: String, output: String, seconds: Double) {
        self.file = file
        self.name = name
        self.location = location
        self.status = status
        // Kept as printed output is, its start and its end: an error of 20 MiB is no report.
        var kept = SpecOutput.Kept(what: "the message")
        kept.add(message)
        self.message = TracebackFolding.folded(kept.text)
        self.output = output
        self.seconds = seconds
    }
}

/// How an interrupted run (Ctrl-C) ended.
struct SpecInterruption: Sendable {
    /// The test under way, which was stopped and is not counted; nil when none had begun.
    let stoppedAt: String?
    /// False when the runner was still in a test past the wait: its coverage counts are not read.
    let runnerStopped: Bool
    /// The signal that interrupted it: SIGINT or SIGTERM.
    var signal = SIGINT

    /// The status the run exits with, as a shell gives a program the signal ended.
    var status: Int32 { 128 + signal }

    /// The line the report says it with, before the summary.
    var line: String {
        let name = signal == SIGTERM ? "SIGTERM" : "SIGINT"
        guard let stoppedAt else { return "interrupted (\(name)): the tests after those above did not run\n" }
        return "interrupted (\(name)) during \(SpecReport.oneLine(stoppedAt)): it is not counted, and the tests after it did not run\n"
    }
}

/// The results so far: the line per test as each comes, the summary, the JUnit XML.
struct SpecReport {
    private(set) var results: [SpecResult] = []
    /// Golden files `--update` rewrote.
    var updated: [String] = []
    /// The run's tags (`--tags`, `--exclude-tags`) that some test's name has, chosen or not.
    var tagged: Set<[UInt8]> = []
    /// Set when the run was interrupted: the results are those that ended before.
    var interruption: SpecInterruption?

    var passed: Int { results.count { $0.status == .passed } }
    var failed: Int { results.count { $0.status == .failed || $0.status == .error } }
    var pending: Int { results.count { $0.status == .pending } }

    /// Records `result` and writes its line (and, for a failure, the message and the output).
    mutating func add(_ result: SpecResult, write: (String) -> Void) {
        results.append(result)
        switch result.status {
        case .passed:
            write("ok      \(Self.oneLine(result.name))  (\(Self.oneLine(result.location)))\n")
        case .pending:
            write("pending \(Self.oneLine(result.name))  (\(Self.oneLine(result.location)))\n")
        case .failed, .error:
            var text = "FAIL    \(Self.oneLine(result.name))  (\(Self.oneLine(result.location)))\n"
            text += Self.indented(Self.messageLines(result.message.isEmpty ? "failed" : result.message).joined(separator: "\n"))
            if !result.output.isEmpty {
                text += "        output:\n" + Self.indented(result.output, by: 10)
            }
            write(text)
        }
    }

    /// `N passed, N failed[, N pending]`: the last line of the report.
    var summary: String {
        var line = "\(passed) passed, \(failed) failed"
        if pending > 0 { line += ", \(pending) pending" }
        if !updated.isEmpty {
            line = "updated \(updated.count) golden file\(updated.count == 1 ? "" : "s"): \(updated.joined(separator: ", "))\n" + line
        }
        return line
    }

    /// `text` on one line, its control characters as Lua escapes (`\010`): a name is one field of
    /// a line-based record (a test line, TAP's `ok N - name`), and a newline or an ESC in it would
    /// forge records or drive the terminal.
    static func oneLine(_ text: String, keepingTabs: Bool = false) -> String {
        func escaped(_ scalar: Unicode.Scalar) -> Bool {
            (scalar.value < 0x20 || scalar.value == 0x7F) && !(keepingTabs && scalar == "\t")
        }
        guard text.unicodeScalars.contains(where: escaped) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if escaped(scalar) {
                result += "\\" + String(repeating: "0", count: scalar.value < 10 ? 2 : scalar.value < 100 ? 1 : 0) + String(scalar.value)
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// A failure's message as lines, each with its control characters but tabs escaped as in
    /// ``oneLine(_:keepingTabs:)``: the message holds data (a file's name, an error a script
    /// raised), and an ESC in it must not drive the terminal or a line end forge a record.
    static func messageLines(_ text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { oneLine(String($0), keepingTabs: true) }
    }

    private static func indented(_ text: String, by columns: Int = 8) -> String {
        let pad = String(repeating: " ", count: columns)
        // A NUL byte would end the message on many terminals and tools: shown as Lua writes it.
        let text = text.replacingOccurrences(of: "\u{0}", with: "\\0")
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        while lines.last?.isEmpty == true { lines.removeLast() }
        return lines.map { pad + $0 }.joined(separator: "\n") + "\n"
    }

    // MARK: JUnit

    /// The results as JUnit XML: a `testsuite` per spec file, a `testcase` per test with its
    /// `failure` (an assertion), `error` (anything else raised, as busted and JUnit readers count
    /// them) or `skipped`, and what the test printed as `system-out`.
    var junit: String {
        var files: [String] = []
        for result in results where !files.contains(result.file) { files.append(result.file) }
        let total = results.reduce(0) { $0 + $1.seconds }
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        let allErrors = results.count { $0.status == .error }
        xml += "<testsuites name=\"crescent test\" tests=\"\(results.count)\" failures=\"\(failed - allErrors)\" errors=\"\(allErrors)\" "
            + "skipped=\"\(pending)\" time=\"\(Self.time(total))\">\n"
        for file in files {
            let cases = results.filter { $0.file == file }
            let failures = cases.count { $0.status == .failed }
            let errors = cases.count { $0.status == .error }
            let skipped = cases.count { $0.status == .pending }
            xml += "  <testsuite name=\"\(Self.escape(file, attribute: true))\" tests=\"\(cases.count)\" failures=\"\(failures)\" errors=\"\(errors)\" "
                + "skipped=\"\(skipped)\" time=\"\(Self.time(cases.reduce(0) { $0 + $1.seconds }))\">\n"
            for result in cases {
                xml += "    <testcase name=\"\(Self.escape(result.name, attribute: true))\" classname=\"\(Self.escape(file, attribute: true))\" "
                    + "file=\"\(Self.escape(file, attribute: true))\""
                if let line = result.location.split(separator: ":").last.flatMap({ Int($0) }) { xml += " line=\"\(line)\"" }
                xml += " time=\"\(Self.time(result.seconds))\""
                switch result.status {
                case .passed where result.output.isEmpty:
                    xml += "/>\n"
                    continue
                case .passed:
                    xml += ">\n"
                case .pending:
                    xml += ">\n      <skipped/>\n"
                case .failed, .error:
                    let first = result.message.split(separator: "\n").first.map(String.init) ?? "failed"
                    let element = result.status == .error ? "error" : "failure"
                    xml += ">\n      <\(element) message=\"\(Self.escape(first, attribute: true))\">\(Self.escape(result.message))</\(element)>\n"
                }
                if !result.output.isEmpty { xml += "      <system-out>\(Self.escape(result.output))</system-out>\n" }
                xml += "    </testcase>\n"
            }
            xml += "  </testsuite>\n"
        }
        return xml + "</testsuites>\n"
    }

    private static func time(_ seconds: Double) -> String {
        String(format: "%.3f", seconds)
    }

    /// Text safe in XML content and attributes; characters XML 1.0 cannot hold become U+FFFD.
    /// In an attribute (`attribute`) a tab, CR or LF is a character reference: a reader turns a
    /// raw one into a space there, and a test's name must read back as it was.
    static func escape(_ text: String, attribute: Bool = false) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&apos;"
            case "\t", "\n", "\r":
                if attribute { escaped += "&#\(scalar.value);" } else { escaped.unicodeScalars.append(scalar) }
            default:
                escaped.unicodeScalars.append(scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF ? "\u{FFFD}" : scalar)
            }
        }
        return escaped
    }
}
