import LuaBridge
import Model

/// One owner's share in a started service (`svc:start(opts)`): the service runs while any share
/// is live, and ending the owner ends its share.
final class StartShare: Cancellable {
    let service: ObjectBox
    private(set) var options: Value
    private let ownerLink: WeakLink<Scope>
    var ownerSlot: Int32 = -1
    private let bindingLink: WeakLink<ModelBinding>
    /// The scope whose share it is, while that scope lives.
    var owner: Scope? { ownerLink.object }
    var binding: ModelBinding? { bindingLink.object }

    init(service: ObjectBox, options: Value, owner: Scope, binding: ModelBinding) {
        self.service = service
        self.options = options
        ownerLink = owner.weakLink
        bindingLink = binding.weakLink
    }

    func update(_ newOptions: Value) { options = newOptions }

    func cancel() { binding?.end(self) }
}

extension ModelBinding {
    /// `svc:start([options])` and `svc:stop()`, counted per owner.
    func startMethods(owner name: String, type: @escaping () -> LuaObjectType<ObjectBox>?) -> [String: LuaFunctionBody] {
        [
            "start": { [unowned self] stack in
                let signature = "\(name):start([options])"
                let box = try self.checkSelf(stack, type(), signature: signature)
                // As the declared methods refuse one: `start({}, 5)` does not take the 5.
                try ExtraArguments.check(stack, takes: 2, signature: signature, arity: "0 or 1 argument", isMethod: true)
                var options = Value.null
                if !stack.isNoneOrNil(2) {
                    guard stack.type(at: 2) == .table else {
                        throw CallSite.method("start", signature).mismatch(stack, 2, expected: "a table of options")
                    }
                    do throws(ConversionFailure) {
                        options = try self.value(at: 2, in: stack)
                    } catch {
                        throw LuaRaise("\(name):start([options]): argument #1 must be a table of options, got \(error.description)")
                    }
                }
                do throws(ServiceError) {
                    try box.object.asStartable?.checkStartOptions(options)
                } catch {
                    throw LuaRaise("\(signature): argument #1: \(error.message)")
                }
                self.start(box, options: options, owner: self.running.currentScope)
                return .none
            },
            "stop": { [unowned self] stack in
                let box = try self.checkSelf(stack, type(), signature: "\(name):stop()")
                try ExtraArguments.check(stack, takes: 1, signature: "\(name):stop()", arity: "none", isMethod: true)
                self.shares[ObjectIdentifier(box.object)]?.first { $0.owner === self.running.currentScope }?.cancel()
                return .none
            },
        ]
    }

    /// Starts `box` for `owner` (or changes that owner's options).
    func start(_ box: ObjectBox, options: Value, owner: Scope) {
        let id = ObjectIdentifier(box.object)
        startedServices.insert(box.name)
        if let existing = shares[id]?.first(where: { $0.owner === owner }) {
            existing.update(options)
        } else {
            let share = StartShare(service: box, options: options, owner: owner, binding: self)
            shares[id, default: []].append(share)
            owner.adopt(share)
        }
        notifyShares(of: box)
    }

    /// Ends one share; the last one stops the service.
    func end(_ share: StartShare) {
        let id = ObjectIdentifier(share.service.object)
        guard var list = shares[id], let index = list.firstIndex(where: { $0 === share }) else { return }
        list.remove(at: index)
        shares[id] = list.isEmpty ? nil : list
        share.owner?.forget(share)
        notifyShares(of: share.service)
    }

    private func notifyShares(of box: ObjectBox) {
        guard let service = box.object.asStartable else { return }
        if let list = shares[ObjectIdentifier(box.object)], !list.isEmpty {
            service.startUpdates(shares: list.map(\.options))
        } else {
            service.stopUpdates()
        }
    }
}
