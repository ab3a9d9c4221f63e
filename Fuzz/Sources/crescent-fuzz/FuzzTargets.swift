@testable import CrescentKit
import CLua
import Foundation
import LuaBridge
import Model
import NIOEmbedded
@testable import Services

// libFuzzer targets for every parser that reads outside input, and for the conversion of Lua
// values to model values and back. One binary holds them all; CRESCENT_FUZZ_TARGET picks one
// (`make fuzz` runs each in turn from its seed corpus in Fuzz/corpus/TARGET). Built with
// `-sanitize=fuzzer` (see the Makefile): libFuzzer provides `main` and calls the function below
// with each input. A target fails by crashing; the checks beyond "does not crash" are the
// round trips a parser promises.

/// The targets by name.
nonisolated(unsafe) private let targets: [String: ([UInt8]) -> Void] = [
    "nmea": fuzzNMEA,
    "gpx": fuzzGPX,
    "gpsd": fuzzGpsdLine,
    "feed": fuzzFeed,
    "json": fuzzJSON,
    "config": fuzzConfig,
    "url": fuzzURL,
    "lua-value": fuzzLuaValue,
]

/// The target this process runs, chosen once at start.
nonisolated(unsafe) private var selected: ([UInt8]) -> Void = { _ in }

@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> Int32 {
    let name = ProcessInfo.processInfo.environment["CRESCENT_FUZZ_TARGET"] ?? ""
    guard let target = targets[name] else {
        FileHandle.standardError.write(Data("set CRESCENT_FUZZ_TARGET to one of: \(targets.keys.sorted().joined(separator: ", "))\n".utf8))
        exit(2)
    }
    selected = target
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    selected(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    return 0
}

private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

private func fuzzNMEA(_ bytes: [UInt8]) {
    var parser = NMEAParser(today: 1_718_452_800)
    var fixes: [LocationFix] = []
    for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
        fixes += parser.feed(text(Array(line)))
    }
    fixes += parser.finish()
    for fix in fixes { precondition(fix.isValid, "the parser made an invalid fix \(fix)") }
}

private func fuzzGPX(_ bytes: [UInt8]) {
    guard let points = try? GPXParser.parse(bytes) else { return }
    _ = GPXParser.fixes(points).compactMap { $0.validated() }
}

private func fuzzGpsdLine(_ bytes: [UInt8]) {
    guard let report = try? Value(jsonBytes: bytes) else { return }
    if let fix = GpsdProvider.fix(from: report)?.validated() {
        precondition(fix.speed.map { $0 >= 0 } ?? true && fix.accuracy.map { $0 >= 0 } ?? true, "\(fix)")
    }
}

private func fuzzFeed(_ bytes: [UInt8]) {
    guard let feed = try? FeedParser.parse(bytes, url: "http://feeds.example/feed.xml") else { return }
    for item in feed.items {
        // Text from the network is plain text, and only web links are kept.
        for field in [item.title, item.summary, feed.title] {
            precondition(!field.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }, "a control character in \(field)")
        }
        if let link = item.link { precondition(link.lowercased().hasPrefix("http"), "link \(link)") }
    }
}

private func fuzzJSON(_ bytes: [UInt8]) {
    guard let value = try? Value(jsonBytes: bytes) else { return }
    // What was decoded encodes to text that decodes to the same value.
    let again = try? Value(jsonText: value.jsonText)
    precondition(again.map { $0.jsonText == value.jsonText } ?? false, "round trip of \(value)")
}

private func fuzzConfig(_ bytes: [UInt8]) {
    guard let file = try? ConfigFile.parse(text(bytes), name: "fuzz.toml") else { return }
    _ = file.warnings(plugins: [.standard])
}

private func fuzzURL(_ bytes: [UInt8]) {
    let location = text(bytes)
    _ = try? HTTPTarget(location)
    // A redirect's Location, resolved against the request's URL as a client does.
    let base = URL(string: "http://127.0.0.1:8080/a/b?c")
    if let resolved = URL(string: location, relativeTo: base)?.absoluteString { _ = try? HTTPTarget(resolved) }
    _ = FeedEntryDraft.resolve(location, against: base)
}

/// One host for the run: its VM converts values the way scripts' values are converted.
nonisolated(unsafe) private let luaHost: CrescentKit.Host? = {
    let loop = EmbeddedEventLoop()
    return try? CrescentKit.Host(loop: loop, options: HostOptions(), console: Console(colors: false) { _, _ in }, plugins: [],
                     clock: ManualClock()) { _ in }
}()

private func fuzzLuaValue(_ bytes: [UInt8]) {
    guard let host = luaHost else { return }
    let stack = host.vm.stack
    let top = stack.top
    defer { stack.setTop(top) }
    // The input as a string, as a key and inside a table decoded by the prelude's json module.
    _ = host.vm.getGlobal("json")
    guard (try? stack.getField(-1, "decode")) != nil else { return }
    stack.push(LuaString(bytes: bytes))
    if (try? host.vm.call(arguments: 1, results: 1)) != nil {
        // Nulls are nil in Lua, so the first trip to Lua may drop an object's null fields; after
        // that a value comes back unchanged, and no trip turns an object into an array.
        let converted = host.binding.convertedValue(at: -1, in: stack)
        host.binding.push(converted.value, onto: stack)
        let again = host.binding.convertedValue(at: -1, in: stack)
        host.binding.push(again.value, onto: stack)
        let third = host.binding.convertedValue(at: -1, in: stack)
        precondition(converted.failure != nil || (third.value == again.value && sameShape(converted.value, again.value)),
                     "round trip of \(converted.value.jsonText): \(again.value.jsonText), then \(third.value.jsonText)")
    }
    stack.newTable()
    stack.push(LuaString(bytes: bytes))
    stack.push(LuaString(bytes: bytes))
    lua_rawset(stack.state, -3)
    _ = host.binding.convertedValue(at: -1, in: stack)
}

/// Whether `a` and `b` are objects, arrays or neither alike, with their object fields' shapes
/// alike too (fields that are null in `a` may be missing in `b`).
private func sameShape(_ a: Value, _ b: Value) -> Bool {
    switch (a, b) {
    case (.object(let x), .object(let y)):
        x.allSatisfy { key, value in value.isNull || y[key].map { sameShape(value, $0) } ?? false }
    case (.array, .array): true
    case (.object, _), (.array, _), (_, .object), (_, .array): false
    default: true
    }
}

/// libFuzzer's driver, entered from the executable's entry point: SwiftPM links an executable
/// target's `main` to `<module>_main`, so libFuzzer's own `main` is not the one that runs.
@_silgen_name("LLVMFuzzerRunDriver")
private func runDriver(_ argc: UnsafeMutablePointer<Int32>,
                       _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                       _ test: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32

@_cdecl("crescent_fuzz_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    var count = argc
    var arguments: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    _ = initialize(&count, &arguments)
    return runDriver(&count, &arguments) { data, size in testOneInput(data, size) }
}
