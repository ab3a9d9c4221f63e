import CLua
import LuaBridge
import Model
import NIOCore

extension ModelBinding {
    /// The Lua functions in an interface's methods table: its declared methods, plus observation
    /// shorthands, delegates and (for startable services) start/stop.
    func methodFunctions(for box: ObjectBox, type: @escaping () -> LuaObjectType<ObjectBox>?) -> [String: LuaFunctionBody] {
        var functions: [String: LuaFunctionBody] = [:]
        let owner = box.name
        let madeIn = box.generation
        for spec in box.interface.methods {
            functions[spec.name] = { [unowned self] stack in
                let box = try self.checkSelf(stack, type(), signature: spec.signature(owner: owner))
                box.wasCalled = true
                // A later model's object of the same interface (a spec file's next test) has
                // methods of its own: a plugin's are bound to the plugin that made them.
                guard box.generation != madeIn else { return try self.invoke(spec, on: box, stack) }
                return try self.invoke(box.interface.methods.first { $0.name == spec.name } ?? spec, on: box, stack)
            }
        }
        functions.merge(observationMethods(owner: owner, type: type)) { declared, _ in declared }
        if box.object.asStartable != nil {
            functions.merge(startMethods(owner: owner, type: type)) { declared, _ in declared }
        }
        return functions
    }

    // MARK: Calls

    /// Checks the arguments against the declaration, then starts the call.
    private func invoke(_ spec: AnyMethodSpec, on box: ObjectBox, _ stack: LuaStack) throws -> LuaReturn {
        // Built only when an error needs it: this is the hot path of every call.
        func signature() -> String { spec.signature(owner: box.name) }
        var last = stack.top
        var completion: Int32?
        if spec.hasCompletion, last >= 2, stack.type(at: last) == .function {
            completion = last
            last -= 1
        }
        while last > 1 && stack.isNoneOrNil(last) { last -= 1 }
        let given = Int(last) - 1
        if given > spec.arguments.count {
            if spec.hasCompletion && completion == nil && given == spec.arguments.count + 1 {
                throw LuaRaise("\(signature()): argument #\(given) (completion) must be a function(result, err), got \(stack.typeName(at: last))")
            }
            // After a completion given in its place, the extra is the argument past it.
            var extra = spec.arguments.count + 1
            if spec.hasCompletion, stack.type(at: Int32(extra + 1)) == .function { extra += 1 }
            throw LuaRaise("\(signature()): argument #\(extra) is one too many (it takes \(Self.arity(of: spec)))")
        }
        var values: [Value] = []
        values.reserveCapacity(spec.arguments.count)
        // A well-typed table holding something no service can receive: the call fails with
        // invalid_argument through its completion (once every argument has been checked).
        var rejection: ServiceError?
        for (offset, argument) in spec.arguments.enumerated() {
            let position = Int32(offset + 2)
            if position > last || stack.isNoneOrNil(position) {
                if argument.isOptional {
                    values.append(.null)
                    continue
                }
                throw LuaRaise("\(signature()): argument #\(offset + 1) (\(argument.name)) is missing: it must be \(argument.type)")
            }
            if let expected = Self.luaType(of: argument.type), stack.type(at: position) != expected {
                // Checked before converting, so a wrong 10 MB string is not copied to be refused.
                throw LuaRaise("\(signature()): argument #\(offset + 1) must be \(argument.type), got \(stack.typeName(at: position))")
            }
            // A batch longer than the method takes is refused before it is converted (a million
            // locations took seconds and hundreds of MB to be refused by the service).
            if let maximum = argument.maximumItems, stack.type(at: position) == .table,
               case let length = stack.rawLength(position), length > maximum {
                if rejection == nil {
                    rejection = ServiceError(.invalidArgument, "\(argument.name) has \(length) items, more than the \(maximum) one call "
                                             + "takes: split it into calls of at most \(maximum) each")
                }
                values.append(.null)
                continue
            }
            refusesMetatables = box.crossesVMs
            refusesProxies = true
            let (value, failure) = convertedValue(at: position, in: stack)
            refusesMetatables = false
            refusesProxies = false
            guard argument.type.accepts(value) else {
                let got = failure?.description ?? Self.describeMismatch(value, argument.type, stack.typeName(at: position))
                throw LuaRaise("\(signature()): argument #\(offset + 1) must be \(argument.type), got \(got)")
            }
            // A misspelled option is a misspelled name: raised here, as location:start's is,
            // whether the method answers through a completion or not.
            if let options = argument.options, let unknown = OptionTable.unknownKey(in: value, options) {
                throw LuaRaise("\(signature()): argument #\(offset + 1): \(unknown)")
            }
            if let failure, rejection == nil {
                rejection = ServiceError(.invalidArgument, failure.message(root: Self.pathRoot(of: argument, value)))
            }
            values.append(value)
        }
        let arguments = Arguments(values)
        guard spec.hasCompletion else { return try runAction(spec, on: box, arguments, rejection: rejection, stack) }

        let request = ServiceRequest(service: box.name, method: spec.name, owner: running.currentScope, binding: self)
        request.object = box.object
        if let completion {
            stack.pushValue(at: completion)
            request.completion = vm.ref(from: stack)
        } else {
            guard let task = running.currentTask, task.coroutine.thread == stack.state, stack.isYieldable else {
                if let task = running.currentTask, task.coroutine.thread != stack.state {
                    // Inside a task, but in a coroutine of the script's own (coroutine.wrap): only
                    // the task's own coroutine can wait.
                    throw LuaRaise("\(signature()): argument #\(given + 1) (completion) is missing, and this call is in a coroutine of its own inside the task, which cannot wait: call it in the task's function itself, or pass function(result, err) as the last argument")
                }
                throw LuaRaise("\(signature()): argument #\(given + 1) (completion) is missing: pass function(result, err) as the last argument, or call it inside task(function() ... end) to wait for the result")
            }
            request.waitingTask = task
            task.awaiting = request
        }
        requests.insert(request)
        running.currentScope.adopt(request)
        if let rejection {
            resolve(request, .failure(rejection))
        } else {
            let outer = callingStack
            callingStack = stack
            defer { callingStack = outer }
            start(spec, on: box, arguments, request)
        }
        if request.completion == nil {
            request.waitingTask?.arrangedResume()
            return .yield(0)
        }
        tables.requestType.push(request, onto: stack)
        return .one
    }

    /// `file:line: ` of the innermost frame of a script's own file (not the host's prelude, not
    /// C) in the Lua call whose service work is starting, or nil outside one: a test's fake that
    /// the work does not match names the line that reached it.
    func callingPlace() -> String? {
        // A script's call is a few prelude frames out at most; the bound keeps a deep recursion
        // from being walked to its end.
        callingStack?.innermostFilePlace(levels: 64)
    }

    /// `degrees and a completion`, `location, options and a completion`, `no arguments`.
    static func arity(of spec: AnyMethodSpec) -> String {
        var parts = spec.arguments.map { $0.isOptional ? "\($0.name) (optional)" : $0.name }
        if spec.hasCompletion { parts.append("a completion") }
        guard let last = parts.popLast() else { return "no arguments" }
        return parts.isEmpty ? last : parts.joined(separator: ", ") + " and " + last
    }

    /// The Lua type a scalar argument type needs, checked before any conversion.
    static func luaType(of type: ArgumentType) -> LuaType? {
        switch type {
        case .string: .string
        case .integer, .number: .number
        case .boolean: .boolean
        default: nil
        }
    }

    /// How a service-level message names an argument's value: by the record type that took it
    /// (`record`, `location`), else by the argument's name (`fields`, `records`).
    static func pathRoot(of argument: ArgumentSpec, _ value: Value) -> String {
        var type = argument.type
        if case .oneOf(let types) = type, let taker = types.first(where: { $0.accepts(value) }) { type = taker }
        if case .record(let name, _) = type { return name }
        return argument.name
    }

    /// `string`, or for a table that does not fit a record: `table without lat`,
    /// `table whose lat is a string`; for an array that does not fit: `table whose [2] is a string`.
    static func describeMismatch(_ value: Value, _ type: ArgumentType, _ luaType: String) -> String {
        if case .bytes = value { return value.typeName }
        // For "a location or an array of locations", a record that lacks a field says which,
        // and an array says which item does not fit.
        if case .oneOf(let types) = type {
            let wanted: (ArgumentType) -> Bool = switch value {
            case .object: { if case .record = $0 { true } else { false } }
            case .array(let items) where !items.isEmpty: { if case .array = $0 { true } else { false } }
            default: { _ in false }
            }
            if let alternative = types.first(where: wanted) { return describeMismatch(value, alternative, luaType) }
        }
        if case .array(let element) = type, case .array(let items) = value,
           let position = items.firstIndex(where: { !element.accepts($0) }) {
            return "table whose [\(position + 1)] is \(article(items[position]))"
        }
        guard luaType == "table", case .record(_, let fields) = type else { return luaType }
        for field in fields where !field.type.accepts(value[field.name]) {
            let item = value[field.name]
            if item.isNull {
                guard !field.isOptional else { continue }
                // The fields it has: `lng` given for `lon` shows at once.
                guard case .object(let given) = value, !given.isEmpty else { return "table without \(field.name)" }
                let names = given.keys.sorted()
                return "table without \(field.name) (it has \(names.prefix(8).joined(separator: ", "))\(names.count > 8 ? ", ..." : ""))"
            }
            return "table whose \(field.name) is \(article(item))"
        }
        return "table"
    }

    /// `a string`, `a table`, `a location`: a value's type with its article.
    private static func article(_ value: Value) -> String {
        value.typeName == "table" ? "a table" : "a \(value.typeName)"
    }

    /// Runs a method without a completion; its failure (or `rejection`, found in its arguments)
    /// is raised as the error value.
    private func runAction(_ spec: AnyMethodSpec, on box: ObjectBox, _ arguments: Arguments, rejection: ServiceError?,
                           _ stack: LuaStack) throws -> LuaReturn {
        guard case .immediate(let body) = spec.body else { return .none }
        do throws(ServiceError) {
            if let rejection { throw rejection }
            let outer = callingStack
            callingStack = stack
            defer { callingStack = outer }
            let result = try body(box.object, arguments)
            guard spec.result != nil else { return .none }
            push(result, of: box.object, onto: stack)
            if case .handle(let handle) = result, let owned = handle.object.asOwned { adopt(owned) }
            return .one
        } catch {
            var error = error
            if error.service.isEmpty { error.service = box.name }
            if error.method.isEmpty { error.method = spec.name }
            // Raised, the error says where it was raised (`where`, first in its tostring), as
            // Lua's own errors do.
            luaL_where(stack.state, 1)                               // where
            let place = stack.text(at: -1) ?? ""
            stack.pop()
            push(place.isEmpty ? error.value : error.value(raisedAt: place), onto: stack)   // err
            throw ErrorValueOnTop()
        }
    }

    private func start(_ spec: AnyMethodSpec, on box: ObjectBox, _ arguments: Arguments, _ request: ServiceRequest) {
        switch spec.body {
        case .immediate(let body):
            do {
                resolve(request, .success(try body(box.object, arguments)))
            } catch {
                resolve(request, .failure(error))
            }
        case .async(let body):
            let object = box.object
            let resolveOnLoop = resolver(for: request)
            request.swiftTask = Task {
                do throws(ServiceError) {
                    resolveOnLoop(.success(try await body(object, arguments)))
                } catch {
                    resolveOnLoop(.failure(error))
                }
            }
        case .replying(let body):
            let answer = ReplyAnswer(resolver(for: request))
            let reply = Reply { result in answer.give(result) }
            request.reply = reply
            request.replyAnswer = answer
            body(box.object, arguments, reply)
        }
    }

    /// Resolves `request` from any thread: right away on the loop (the delivery still waits for a
    /// later turn), else in a loop job of its own.
    private func resolver(for request: ServiceRequest) -> @Sendable (ServiceRequest.Outcome) -> Void {
        let link = self.link
        let bound = NIOLoopBound(request, eventLoop: link.eventLoop)
        let binding = NIOLoopBound(self, eventLoop: link.eventLoop)
        return { outcome in
            if bound.eventLoop.inEventLoop, binding.value.running.inTurn {
                binding.value.resolve(bound.value, outcome)
                return
            }
            link.turn { binding in binding.resolve(bound.value, outcome) }
        }
    }

    /// Records the outcome (unless cancelled first) and schedules its one delivery; `replacing`
    /// replaces an outcome whose delivery is queued already.
    func resolve(_ request: ServiceRequest, _ outcome: ServiceRequest.Outcome, replacing: Bool = false) {
        guard request.resolve(outcome, replacing: replacing) else { return }
        host.enqueue { self.deliver(request) }
    }

    /// `Request:cancel()`: the completion will run once, with `cancelled` — unless the work has
    /// already taken effect (a store write committed): `cancelled` means "not done", so the
    /// completion then gets the work's own answer.
    func cancelByUser(_ request: ServiceRequest) {
        guard !request.isDone else { return }
        if let reply = request.reply, !reply.cancel() { return }
        request.swiftTask?.cancel()
        let cancelled = ServiceRequest.Outcome.failure(ServiceError(.cancelled, "the request was cancelled"))
        resolve(request, cancelled, replacing: true)
    }

    private func deliver(_ request: ServiceRequest) {
        guard case .resolved(var outcome) = request.state else { return }
        let completion = request.completion
        let task = request.waitingTask
        let owner = request.owner
        request.finish()
        let stack: LuaStack
        if let task {
            guard !task.isDone else { return }
            task.awaiting = nil
            stack = task.coroutine.stack
        } else {
            stack = vm.stack
            guard let completion else { return }
            completion.push(onto: stack)
        }
        _ = stack.ensure(4)
        if case .success(let value) = outcome {
            if let object = request.object { push(value, of: object, onto: stack) } else { push(value, onto: stack) }
            if vm.isOverMemoryLimit {
                // The result took Lua past its memory limit (Swift's allocations are let through):
                // it is dropped and collected, so the script gets an error it can handle instead
                // of a memory error raised before its own code runs.
                stack.pop(1)
                vm.collectGarbage()
                outcome = .failure(tooBig(for: request))
            } else {
                stack.pushNil()
            }
        }
        switch outcome {
        case .success:
            break
        case .failure(var error):
            if error.service.isEmpty { error.service = request.service }
            if error.method.isEmpty { error.method = request.method }
            stack.pushNil()
            push(error, onto: stack)
        }
        if let task {
            host.resume(task, arguments: 2)
            return
        }
        do {
            try running.withScope(owner) { try vm.call(arguments: 2, results: 0) }
        } catch let error as LuaError {
            host.reportHandlerError(error, in: "error in the completion of \(request.service).\(request.method)")
        } catch {}
    }

    /// The error a result gets when it does not fit in the VM's memory limit.
    private func tooBig(for request: ServiceRequest) -> ServiceError {
        let mib = vm.memoryLimit >> 20
        let setting = vm.memoryLimitSetting.isEmpty ? "--memory-limit" : vm.memoryLimitSetting
        return ServiceError(.io, "the result of \(request.service).\(request.method) did not fit in the Lua memory limit of \(mib) MiB: raise it with \(setting), or ask for less in one call (a smaller maxBytes, where the method takes one)")
    }
}
