import LuaBridge
import Model
import Services

/// Calls from the services into the spec: an http request answered from `fake.http`'s routes,
/// a faked service's method answered by the spec's function (a program's answer is in
/// SpecHost+process.swift).
extension SpecHost {
    /// Answers an http request of the code under test from the spec's `fake.http` routes;
    /// `place` (`spec/x_spec.lua:3: `) is where the script made it, for a route that does not match.
    func answer(_ request: HTTPRequestSpec, at place: String?) -> Result<HTTPResponse, ServiceError> {
        guard host.isRunning, let httpHandler else { return .failure(ServiceError(.cancelled, "the test has ended")) }
        let stack = host.vm.stack
        let base = stack.top
        defer { stack.setTop(base) }
        httpHandler.push(onto: stack)
        var headers: Fields = [:]
        for (name, value) in request.headers { headers[name.lowercased()] = .string(value) }
        host.binding.push(.object(["method": .string(request.method.uppercased()), "url": .string(request.url),
                                   "headers": .object(headers), "body": request.body.map(Value.bytes) ?? .null]), onto: stack)
        if let place { stack.push(place) } else { stack.pushNil() }
        do throws(LuaError) {
            try host.vm.call(arguments: 2, results: 2)
        } catch {
            return .failure(ServiceError(.internal, error.message))
        }
        let response = host.binding.convertedValue(at: -2, in: stack).value
        guard case .object = response else { return .failure(Self.error(host.binding.convertedValue(at: -1, in: stack).value)) }
        var headerFields: [String: String] = [:]
        if case .object(let fields) = response["headers"] {
            for (name, value) in fields { headerFields[name.lowercased()] = value.stringValue ?? "\(value)" }
        }
        let body: [UInt8] = switch response["body"] {
        case .bytes(let bytes): bytes
        case .string(let text): Array(text.utf8)
        default: []
        }
        return .success(HTTPResponse(status: Int(response["status"].integerValue ?? 200), headers: headerFields, body: body,
                                     url: response["url"].stringValue ?? request.url))
    }

    /// Answers a call of a faked service's method with the spec's function.
    func call(_ service: String, _ method: String, _ arguments: Arguments) -> Result<Value, ServiceError> {
        guard host.isRunning, let callHandler else { return .failure(ServiceError(.cancelled, "the test has ended")) }
        let stack = host.vm.stack
        let base = stack.top
        defer { stack.setTop(base) }
        callHandler.push(onto: stack)
        // Where the script called it (the call is on the stack: a fake answers at once), for a
        // method the spec gave no answer for.
        if let place = host.binding.callingPlace() { stack.push(place) } else { stack.pushNil() }
        stack.push(service)
        stack.push(method)
        var count = arguments.values.count
        while count > 0 && arguments.values[count - 1].isNull { count -= 1 }
        for value in arguments.values.prefix(count) { host.binding.push(value, onto: stack) }
        do throws(LuaError) {
            try host.vm.call(arguments: Int32(count + 3), results: 2)
        } catch {
            return .failure(ServiceError(.internal, error.message))
        }
        let result = host.binding.convertedValue(at: -1, in: stack)
        guard stack.boolean(at: -2) else { return .failure(Self.error(result.value)) }
        if let failure = result.failure {
            return .failure(ServiceError(.internal, "fake.service('\(service)').\(method) answered \(failure.description)"))
        }
        return .success(result.value)
    }

    /// A service error from a spec's `{ code, message }` (or a bare code).
    static func error(_ value: Value) -> ServiceError {
        let codeName = value["code"].stringValue ?? value.stringValue ?? "internal"
        let code = ServiceError.Code(name: codeName) ?? .internal
        return ServiceError(code, value["message"].stringValue ?? codeName)
    }
}
