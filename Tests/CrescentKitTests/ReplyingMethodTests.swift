import CrescentKit
import Dispatch
import Model
import Synchronization
import Testing

/// Methods declared with `replying:` (work that answers through a ``Reply`` from any thread) keep
/// the completion contract: exactly once, never before the call returns, awaitable in a task, and
/// `cancel()` reaches the work's cancellation handler (``Reply/onCancel(_:)``) once.
@Suite struct ReplyingMethodTests {
    @Test func callbacksFromAnyThreadKeepTheCompletionContract() async {
        let ticker = Ticker()
        let run = await RealLoopRun.run("""
            local ticker = services.ticker
            ticker:now(5, function(value, err) print("now", value, err) end)
            print("returned")
            ticker:fail(function(value, err) print("fail", value, err.code, tostring(err)) end)
            local request = ticker:after(5, function(value, err) print("after", value, err.code) end)
            request:cancel()
            task(function()
              print("awaited", ticker:after(0.01))
              local value, err = ticker:now(7)
              print("awaited now", value, err)
            end)
            """, options: HostOptions(), plugins: [TickerPlugin(ticker: ticker)])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines == [
            "returned",
            "now\t5\tnil",
            "fail\tnil\tunavailable\tticker.fail: unavailable: asked to fail",
            "after\tnil\tcancelled",
            "awaited\t0.01\tnil",
            "awaited now\t7\tnil",
        ])
        #expect(ticker.cancellations.withLock { $0 } == 1, "cancel() reached the work once")
    }
}

/// A service whose methods answer through replies: at once, from a queue later, or failing.
private final class Ticker: Service {
    let changes = ChangePublisher()
    let cancellations = Mutex(0)
    var interface: AnyInterface { Self.declaration }

    static let declaration: AnyInterface = Interface<Ticker>(name: "ticker", summary: "Answers through replies.") { d in
        d.method("now", [.init("value", .number, "What to answer.")], returns: "the value", "Answers at once, inside the call.", replying: { _, arguments, reply in
            reply(.success(arguments[0]))
        })
        d.method("after", [.init("seconds", .number, "How long to wait.")], returns: "the seconds", "Answers from another thread.", replying: { ticker, arguments, reply in
            let seconds = arguments[0].doubleValue ?? 0
            let cancelled = Flag()
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
                if !cancelled.value.withLock({ $0 }) { reply(.success(arguments[0])) }
            }
            reply.onCancel {
                ticker.cancellations.withLock { $0 += 1 }
                cancelled.value.withLock { $0 = true }
            }
        })
        d.method("fail", [], returns: "nothing", "Fails at once.", replying: { _, _, reply in
            reply(.failure(ServiceError(.unavailable, "asked to fail")))
        })
    }.erased
}

private final class Flag: Sendable {
    let value = Mutex(false)
}

private struct TickerPlugin: Plugin {
    let name = "ticker"
    let ticker: Ticker

    func makeServices(_ context: PluginContext) throws(ServiceError) -> [any Service] { [ticker] }
}
