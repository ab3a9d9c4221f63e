/// The command line of `crescent-bench`: `[--json] [--only NAME,...]`.
///
/// Parsed by hand: two flags do not justify a dependency on swift-argument-parser.
struct BenchOptions {
    /// Print a JSON array for machines instead of the aligned table.
    var json = false
    /// The rows to run, in the order given; nil runs every row.
    var only: [String]?
    /// Print the usage and the row names, run nothing.
    var help = false

    /// Why a command line was rejected; the tool prints it and exits 2.
    struct UsageError: Error {
        let message: String
    }

    static let usage = "usage: crescent-bench [--json] [--only NAME,...]"

    /// Parses the arguments after the program name. `validRows` is what `--only` may name.
    static func parse(_ arguments: [String], validRows: [String]) throws(UsageError) -> BenchOptions {
        var options = BenchOptions()
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            switch argument {
            case "--json":
                options.json = true
            case "--only":
                guard let list = remaining.popFirst() else { throw UsageError(message: "--only needs a list of rows") }
                options.only = try rowNames(list, validRows: validRows)
            case _ where argument.hasPrefix("--only="):
                options.only = try rowNames(String(argument.dropFirst("--only=".count)), validRows: validRows)
            case "-h", "--help":
                options.help = true
            default:
                throw UsageError(message: "unknown argument '\(argument)'")
            }
        }
        return options
    }

    private static func rowNames(_ list: String, validRows: [String]) throws(UsageError) -> [String] {
        let names = list.split(separator: ",").map { String($0) }
        let valid = "valid rows: \(validRows.joined(separator: ", "))"
        if names.isEmpty { throw UsageError(message: "--only needs at least one row; \(valid)") }
        for name in names where !validRows.contains(name) {
            throw UsageError(message: "unknown row '\(name)'; \(valid)")
        }
        var seen: Set<String> = []
        return names.filter { seen.insert($0).inserted }
    }
}
