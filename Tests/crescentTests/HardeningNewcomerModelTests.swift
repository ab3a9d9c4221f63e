import FeedTestSupport
import Foundation
import Testing

/// The newcomer probe of issue 39, finding 2 for the data models that were left unchecked: a feed,
/// a feed item, a user, a file's stat, a process result and a raised error name a misspelled
/// field as the location fix and the placemark do; a store record, whose fields are the
/// script's own, reads an absent field as nil.
@Suite struct HardeningNewcomerModelTests {
    typealias Case = MisspelledNameTests.Case

    /// The lines that print each case's message (`print(select(2, pcall(...)))`), one per case.
    static func printing(_ cases: [Case]) -> String {
        cases.map { "  print(select(2, pcall(function() return \($0.code) end)))" }.joined(separator: "\n")
    }

    /// Checks that `printed` starts with each case's message, the first at `script.lua:LINE`.
    static func expectNamed(_ cases: [Case], in printed: [String], firstLine: Int,
                            sourceLocation: SourceLocation = #_sourceLocation) {
        for (index, expected) in cases.enumerated() {
            let line = index < printed.count ? printed[index] : ""
            let place = "script.lua:\(firstLine + index): "
            #expect(line.hasPrefix(place + expected.starts) && line.hasSuffix(expected.ends), "\(expected): \(line)",
                    sourceLocation: sourceLocation)
        }
    }

    static let cases: [Case] = [
        Case(code: "item.titel", starts: "no field 'titel' on item (fields: id, title, link, published, summary, feed, feedTitle",
             ends: "; did you mean 'title'?)"),
        Case(code: "feed.itemcount", starts: "no field 'itemcount' on feed (fields: url, title, interval, lastChecked, lastError, itemCount",
             ends: "; did you mean 'itemCount'?)"),
        Case(code: "user.nmae", starts: "no field 'nmae' on user (fields: name, since", ends: "; did you mean 'name'?)"),
        Case(code: "stat.sizee", starts: "no field 'sizee' on fileStat (fields: path, kind, size, modified, mode",
             ends: "; did you mean 'size'?)"),
        Case(code: "result.stauts", starts: "no field 'stauts' on processResult (fields: status, signal, stdout, stderr, truncated, timedOut",
             ends: "; did you mean 'status'?)"),
        Case(code: "raised.mesage", starts: "no field 'mesage' on error (fields: code, message, service, method, where",
             ends: "; did you mean 'message'?)"),
    ]

    @Test func aMisspelledFieldOfAFeedItemUserStatResultOrRaisedErrorIsNamed() async throws {
        let server = try await FeedTestServer.start()
        defer { Task { await server.stop() } }
        server.serve("/feed", .init(body: FeedSamples.rss(items: FeedSamples.items(1...2))))
        let header = """
            task(function()
              local feed = services.feeds:add(\(luaString(server.url("/feed"))))
              local item = services.feeds.latest[1]
              assert(services.session:register("ann", "correct horse"))
              local user = services.session:login("ann", "correct horse")
              local stat = services.files:stat(".")
              local result = services.process:run({ "true" })
              local _, raised = pcall(function() services.feeds:remove("http://127.0.0.1:9/none") end)
              local records = services.store:collection("notes")
              local record = records:add({ text = "milk" })
            """
        let lines = header.split(separator: "\n", omittingEmptySubsequences: false).count
        let source = header + "\n" + Self.printing(Self.cases) + """

              print(item.link ~= nil, feed.lastError, user.name, stat.kind, result.status, result.signal, raised.code, raised["where"])
              print(record.text, record.done, select(2, pcall(function() return records:ad({}) end)))
              app.exit(0)
            end)
            """
        let result = try await runScript(source, options: ["--data-dir", "data"])
        #expect(result.status == 0, "\(result)")
        let printed = result.stdoutLines
        Self.expectNamed(Self.cases, in: printed, firstLine: lines + 1)
        // Declared fields a model lacks read nil; a record's fields are the script's own, so an
        // absent one is nil too (records of one collection differ), while a misspelled method
        // of the collection is named.
        #expect(printed.dropFirst(Self.cases.count).first == "true\tnil\tann\tfolder\t0\tnil\tnot_found\tscript.lua:8: ", "\(result)")
        #expect(printed.last?.hasPrefix("milk\tnil\tscript.lua:\(lines + Self.cases.count + 2): no method 'ad' on collection (methods: add, ") == true,
                "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }
}
