#if canImport(Glibc)
import Glibc
#endif

/// The command line as the bytes the program was given. ArgumentParser reads each argument as a
/// Swift string, where a byte that is not UTF-8 becomes U+FFFD; a value that must match bytes
/// (a `--filter` pattern for a test whose name is not UTF-8) is read again from here.
///
/// ```swift
/// let bytes = RawArguments.value(of: "--filter", parsed: filter) ?? Array(filter.utf8)
/// ```
enum RawArguments {
    /// The bytes of the last value given to option `name` (`--name VALUE` or `--name=VALUE`, before
    /// any `--`) that ArgumentParser read as `parsed`; nil when none did.
    static func value(of name: String, parsed: String) -> [UInt8]? {
        given(name).last { String(decoding: $0, as: UTF8.self) == parsed }
    }

    /// The bytes of each value of a repeatable option `name` that ArgumentParser read as `parsed`,
    /// in order: the values given, when they are what it read, else `parsed` itself as UTF-8.
    static func values(of name: String, parsed: [String]) -> [[UInt8]] {
        let given = given(name)
        guard given.count == parsed.count,
              zip(given, parsed).allSatisfy({ String(decoding: $0, as: UTF8.self) == $1 }) else { return parsed.map { Array($0.utf8) } }
        return given
    }

    /// The bytes of a script's arguments, the last words of the command line, that ArgumentParser
    /// read as `parsed`: those words when they are what it read, else `parsed` as UTF-8. Lua's
    /// `arg` keeps the bytes a program was given (a folder's name need not be UTF-8).
    static func trailing(parsed: [String]) -> [[UInt8]] {
        let given = Array(arguments().dropFirst().suffix(parsed.count))
        guard given.count == parsed.count,
              zip(given, parsed).allSatisfy({ String(decoding: $0, as: UTF8.self) == $1 }) else { return parsed.map { Array($0.utf8) } }
        return given
    }

    /// The first of `names` given as `--name=` with nothing after the `=` (before any `--`), or
    /// nil. ArgumentParser takes the next word as the value then (`--filter= spec` filtered by
    /// "spec" and ran the default folders), so the caller refuses it as a usage error.
    static func emptyValue(among names: [String]) -> String? {
        for argument in arguments().dropFirst() {
            if argument == Array("--".utf8) { return nil }
            if let name = names.first(where: { Array(($0 + "=").utf8) == argument }) { return name }
        }
        return nil
    }

    /// The command line's arguments as bytes, the program's name first.
    private static func arguments() -> [[UInt8]] {
        var arguments: [[UInt8]] = []
        for index in 0..<Int(CommandLine.argc) {
            guard let pointer = CommandLine.unsafeArgv[index] else { continue }
            arguments.append(Array(UnsafeRawBufferPointer(start: pointer, count: strlen(pointer))))
        }
        return arguments
    }

    /// The values given to option `name`, in order.
    private static func given(_ name: String) -> [[UInt8]] {
        let arguments = arguments()
        let option = Array(name.utf8), joined = Array((name + "=").utf8)
        var values: [[UInt8]] = []
        var index = 1
        while index < arguments.count {
            let argument = arguments[index]
            if argument == Array("--".utf8) { break }
            if argument == option && index + 1 < arguments.count {
                index += 1
                values.append(arguments[index])
            } else if argument.starts(with: joined) {
                values.append(Array(argument.dropFirst(joined.count)))
            }
            index += 1
        }
        return values
    }
}
