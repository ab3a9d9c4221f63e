import Foundation
import Model
import Testing
@testable import CrescentKit

/// The mailbox that carries one object's reports to the loop: numbered in the order they were
/// posted, taken out whole or up to a number (what a read on the loop has seen).
@Suite struct ReportMailboxTests {
    private static func report(_ number: Int) -> ModelChange {
        .property(key: "count", value: .integer(Int64(number)))
    }

    private static func numbers(_ changes: [ModelChange]) -> [Int64] {
        changes.compactMap { change in
            if case .property(_, .integer(let number)) = change { number } else { nil }
        }
    }

    @Test func postSaysWhenTheMailboxWasEmptyAndTakeKeepsOrder() {
        let mailbox = ReportMailbox()
        #expect(mailbox.isEmpty && mailbox.lastPosted == 0)
        #expect(mailbox.post(Self.report(1)), "the first report finds it empty: the poster schedules a job")
        #expect(!mailbox.post(Self.report(2)), "a job is already on its way for the second")
        #expect(!mailbox.post(Self.report(3)))
        #expect(!mailbox.isEmpty && mailbox.lastPosted == 3)
        #expect(Self.numbers(mailbox.take(through: 2)) == [1, 2], "a read that saw two reports takes those two")
        #expect(Self.numbers(mailbox.take(through: 2)).isEmpty, "taking through a number already taken takes nothing")
        #expect(!mailbox.isEmpty)
        #expect(Self.numbers(mailbox.take()) == [3])
        #expect(mailbox.isEmpty && mailbox.lastPosted == 3)
        #expect(mailbox.post(Self.report(4)), "empty again: the next report schedules a job again")
        #expect(Self.numbers(mailbox.take(through: 10)) == [4], "a number past the last takes what there is")
    }

    /// Four threads post while the loop's side takes in pieces: every report comes out once, and
    /// each thread's reports in the order it posted them.
    @Test func concurrentPostsComeOutOnceAndInOrder() async {
        let mailbox = ReportMailbox()
        let perThread = 2_000
        let all = await withTaskGroup(of: [Int64].self) { group in
            for thread in 0..<4 {
                group.addTask {
                    for index in 0..<perThread { _ = mailbox.post(Self.report(thread * 100_000 + index)) }
                    return []
                }
            }
            group.addTask {
                var taken: [Int64] = []
                while taken.count < 4 * perThread {
                    // Alternately up to what was posted so far and everything, as reads and jobs do.
                    let piece = taken.count % 2 == 0 ? mailbox.take(through: mailbox.lastPosted) : mailbox.take()
                    taken += Self.numbers(piece)
                    if piece.isEmpty { await Task.yield() }
                }
                return taken
            }
            var all: [Int64] = []
            for await part in group { all += part }
            return all
        }
        #expect(all.count == 4 * perThread && Set(all).count == all.count, "each report once")
        for thread in 0..<4 {
            let own = all.filter { $0 / 100_000 == Int64(thread) }
            #expect(own == own.sorted(), "thread \(thread)'s reports in the order it posted them")
        }
        #expect(mailbox.isEmpty && mailbox.lastPosted == UInt64(4 * perThread))
    }
}
