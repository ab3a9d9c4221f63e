import ArgumentParser
import CrescentKit
import Model
#if canImport(Glibc)
import Glibc
#endif

/// `crescent ls`: the hosts that listen: name, pid, script, uptime, clients.
struct LsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls",
        abstract: "List the running hosts that listen (--listen): name, pid, script, uptime, clients."
    )

    func run() throws {
        let hosts = RemoteHosts.live()
        guard !hosts.isEmpty else {
            ProcessIO.writeOut("No host is listening (start one with: crescent --listen SCRIPT.lua).\n")
            return
        }
        var rows = [["NAME", "PID", "SCRIPT", "UPTIME", "CLIENTS"]]
        for host in hosts {
            let hello = (try? RemoteClient(path: host.path).call("hello")).flatMap { try? $0.get() } ?? .null
            // The connection asking is one of the clients hello counts.
            let clients = hello["clients"].integerValue.map { String(max($0 - 1, 0)) } ?? "?"
            rows.append([host.name, String(host.pid), hello["script"].stringValue ?? "?", Self.uptime(of: host.pid), clients])
        }
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            let cells = row.indices.map { row[$0] + String(repeating: " ", count: widths[$0] - row[$0].count) }
            ProcessIO.writeOut(cells.joined(separator: "  ").trimmingTrailingSpaces() + "\n")
        }
    }

    /// How long process `pid` has run, from /proc (`1h02m`, `3m05s`, `12s`).
    static func uptime(of pid: Int32) -> String {
        guard let stat = read("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")"),
              let system = read("/proc/uptime").flatMap({ Double($0.split(separator: " ").first ?? "") }) else { return "?" }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // Field 22 (starttime) is the 20th after the command's closing parenthesis.
        guard fields.count > 19, let ticks = Double(fields[19]) else { return "?" }
        let seconds = max(Int(system - ticks / Double(sysconf(Int32(_SC_CLK_TCK)))), 0)
        if seconds >= 3600 { return "\(seconds / 3600)h" + String(format2: (seconds % 3600) / 60) + "m" }
        if seconds >= 60 { return "\(seconds / 60)m" + String(format2: seconds % 60) + "s" }
        return "\(seconds)s"
    }

    private static func read(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count <= 0 { break }
            bytes += buffer.prefix(count)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

private extension String {
    /// Two digits, zero-padded.
    init(format2 value: Int) { self = value < 10 ? "0\(value)" : String(value) }

    func trimmingTrailingSpaces() -> String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
