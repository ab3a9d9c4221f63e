import Foundation

extension BenchFolder {
    /// Runs `python3 <folder>/baseline.py ARGUMENTS` (each argument a file name in the folder)
    /// with no input and its output discarded, and returns its exit status.
    func runBaseline(_ arguments: [String], row: String) throws(BenchFailure) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", path + "/baseline.py"] + arguments.map { path + "/" + $0 }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw BenchFailure(row: row, reason: "cannot run python3: \(error)")
        }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
