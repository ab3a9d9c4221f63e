@testable import CrescentKit
import Model
import NIOEmbedded
import Testing

/// The time limit of a plugin's calls, on a virtual clock.
@Suite struct CallDeadlinesTests {
    final class Fixture {
        let clock = ManualClock()
        let loop = EmbeddedEventLoop()
        var expired: [String] = []
        lazy var deadlines = CallDeadlines(clock: clock, loop: loop, limit: 10) { [unowned self] call in
            expired.append(call.method)
            call.answer(.failure(ServiceError(.timeout, "late")))
        }

        func call(_ name: String) -> PluginCall {
            let call = PluginCall(plugin: "p", service: "svc", method: name, result: ResultCheck(returns: "value"), arguments: Arguments([]), reply: Reply { _ in })
            call.onDone = { [unowned self] call in deadlines.remove(call) }
            deadlines.add(call)
            return call
        }
    }

    @Test func callsPastTheLimitExpireInOrderAndAnsweredOnesDoNot() {
        let fixture = Fixture()
        let first = fixture.call("first")
        let second = fixture.call("second")
        let third = fixture.call("third")
        second.answer(.success(.null))
        #expect(Set(fixture.deadlines.calls.map(\.method)) == ["first", "third"])
        fixture.clock.advance(by: .seconds(4))
        let fourth = fixture.call("fourth")
        fixture.clock.advance(by: .seconds(6))
        #expect(Set(fixture.expired) == ["first", "third"])
        #expect(first.isDone && third.isDone && !fourth.isDone)
        #expect(Set(fixture.deadlines.calls.map(\.method)) == ["fourth"])
        fixture.clock.advance(by: .seconds(4))
        #expect(fixture.expired.count == 3 && fixture.expired.last == "fourth")
        #expect(fixture.deadlines.calls.isEmpty)
    }

    /// Answered calls leave whatever order they end in; a call removed twice changes nothing.
    @Test func answeredCallsLeaveTheQueueInAnyOrder() {
        let fixture = Fixture()
        let calls = (1...5).map { fixture.call("c\($0)") }
        for index in [3, 1, 0, 4] { calls[index].answer(.success(.null)) }
        fixture.deadlines.remove(calls[0])
        #expect(Set(fixture.deadlines.calls.map(\.method)) == ["c3"])
        let late = fixture.call("c6")
        calls[2].answer(.success(.null))
        #expect(Set(fixture.deadlines.calls.map(\.method)) == ["c6"])
        fixture.clock.advance(by: .seconds(11))
        #expect(fixture.expired == ["c6"])
        #expect(late.isDone)
    }

    /// A call added after it started (a Lua plugin's method that ran a while before its first
    /// await) keeps the limit counted from its start.
    @Test func theLimitCountsFromTheStartGiven() {
        let fixture = Fixture()
        let started = fixture.clock.uptime
        fixture.clock.advance(by: .seconds(7))
        let call = PluginCall(plugin: "p", service: "svc", method: "late", result: ResultCheck(returns: "value"), arguments: Arguments([]), reply: Reply { _ in })
        fixture.deadlines.add(call, since: started)
        fixture.clock.advance(by: .seconds(2))
        #expect(fixture.expired.isEmpty)
        fixture.clock.advance(by: .seconds(1))
        #expect(fixture.expired == ["late"])
    }

    @Test func cancelAllForgetsEveryCallAndTheQueueStartsAgain() {
        let fixture = Fixture()
        _ = fixture.call("a")
        _ = fixture.call("b")
        fixture.deadlines.cancelAll()
        #expect(fixture.deadlines.calls.isEmpty)
        let after = fixture.call("c")
        #expect(Set(fixture.deadlines.calls.map(\.method)) == ["c"])
        fixture.clock.advance(by: .seconds(11))
        #expect(fixture.expired == ["c"])
        #expect(after.isDone)
    }
}
