import NIOCore

/// The binding, as work from any thread reaches it: on its loop, as a turn of its host's (which
/// ends with the deliveries and output the job caused), through the host's ``LoopGate``; dropped
/// once the host has finished. Like the host's own link it holds the host, so a job that gets through
/// finds it. Made on the loop.
struct BindingLink: Sendable {
    /// The binding and its host, both used on the loop only.
    private struct Ends {
        let binding: ModelBinding
        let host: any BindingLoop
    }

    private let bound: NIOLoopBound<Ends>
    private let gate: LoopGate

    init(_ binding: ModelBinding) {
        let host = binding.host
        bound = NIOLoopBound(Ends(binding: binding, host: host), eventLoop: host.loop)
        gate = host.gate
    }

    /// The binding's loop.
    var eventLoop: any EventLoop { bound.eventLoop }

    /// Runs `job` on the loop as part of a turn: at once when called on the loop (inside the
    /// current turn, or as a turn of its own between turns), else as a turn on the loop, unless
    /// the host has finished.
    func turn(_ job: @escaping @Sendable (ModelBinding) -> Void) {
        if bound.eventLoop.inEventLoop {
            Self.run(job, bound.value)
        } else {
            let bound = bound
            gate.execute(on: bound.eventLoop) { Self.run(job, bound.value) }
        }
    }

    /// Runs `job` on the loop as a turn of its own, after everything already queued there (also
    /// when called on the loop), unless the host has finished; false when it was dropped.
    @discardableResult
    func later(_ job: @escaping @Sendable (ModelBinding) -> Void) -> Bool {
        let bound = bound
        return gate.execute(on: bound.eventLoop) { Self.run(job, bound.value) }
    }

    private static func run(_ job: (ModelBinding) -> Void, _ ends: Ends) {
        ends.host.runTurn { job(ends.binding) }
    }
}

extension ModelBinding {
    /// How work from other threads reaches this binding (see ``BindingLink``); made on the loop.
    var link: BindingLink { BindingLink(self) }
}
