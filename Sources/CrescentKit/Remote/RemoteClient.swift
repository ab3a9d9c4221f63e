public import Model

/// A blocking JSON-RPC client of a listening host: what `crescent eval`, `attach`, `observe` …,
/// the tests and the bench speak through.
///
/// ```swift
/// let client = try RemoteClient(host: "groceries")
/// let answer = try client.call("eval", ["code": "1 + 1"])   // .success(["text": "2", "value": 2])
/// ```
public final class RemoteClient {
    public let socket: UnixSocket
    /// The name of the host's socket, or its path.
    public let path: String
    private var received: [UInt8] = []
    private var nextID: Int64 = 0
    /// Notifications read while waiting for a response, in order.
    private var notifications: [JSONRPCMessage] = []

    /// Connects to the socket at `path`.
    public init(path: String) throws(RemoteError) {
        self.path = path
        socket = try UnixSocket.connect(path: path)
    }

    /// Connects to the host `target` names (see ``RemoteHosts/resolve(_:in:)``).
    public convenience init(host target: String?, folder: RemoteFolder = .standard()) throws(RemoteError) {
        try self.init(path: RemoteHosts.resolve(target, in: folder).path)
    }

    /// Sends a request and waits for its answer; notifications that come first are kept for
    /// ``nextMessage(timeout:)``, unless `onNotification` takes them as they come (answers true:
    /// a host telling the client, while it waits, that a person is asked first).
    public func call(_ method: String, _ params: Value = .null,
                     onNotification: (JSONRPCMessage) -> Bool = { _ in false }) throws(RemoteError) -> Result<Value, JSONRPCError> {
        let id = try request(method, params)
        while true {
            guard let message = try readMessage(timeout: -1) else {
                throw RemoteError("the host closed the connection before answering \(method)")
            }
            switch message {
            case .response(.integer(id), let result): return .success(result)
            case .failure(.integer(id)?, let error): return .failure(error)
            case .notification(let name, let params) where name == "disconnect":
                throw RemoteError("the host disconnected: \(params["reason"].stringValue ?? "no reason given")")
            case .notification: if !onNotification(message) { notifications.append(message) }
            default: continue
            }
        }
    }

    /// Sends a request without waiting; returns its id.
    @discardableResult
    public func request(_ method: String, _ params: Value = .null) throws(RemoteError) -> Int64 {
        nextID += 1
        try socket.write(JSONRPCMessage.request(id: .integer(nextID), method: method, params: params).line + "\n")
        return nextID
    }

    /// Sends a raw line (tests of malformed input).
    public func send(line: String) throws(RemoteError) {
        try socket.write(line + "\n")
    }

    /// The next message: a kept notification first, else one read within `timeout` seconds
    /// (negative: no limit). Nil on timeout or when the host closed the connection.
    public func nextMessage(timeout: Double) throws(RemoteError) -> JSONRPCMessage? {
        if !notifications.isEmpty { return notifications.removeFirst() }
        return try readMessage(timeout: timeout)
    }

    /// True when a whole message waits in what was read already.
    public var hasBufferedMessage: Bool { !notifications.isEmpty || received.contains(UInt8(ascii: "\n")) }

    private var closed = false

    /// Reads one message; nil on timeout or at the end of the stream. Lines that do not parse
    /// are skipped.
    private func readMessage(timeout: Double) throws(RemoteError) -> JSONRPCMessage? {
        while true {
            if let newline = received.firstIndex(of: UInt8(ascii: "\n")) {
                let line = received[..<newline]
                defer { received.removeSubrange(...newline) }
                if case .success(let message) = JSONRPCMessage.parse(line: line) { return message }
                continue
            }
            guard !closed, socket.waitReadable(timeout: timeout) else { return nil }
            let bytes = try socket.read()
            if bytes.isEmpty {
                closed = true
                return nil
            }
            received += bytes
        }
    }

    /// True once the host closed the connection.
    public var isClosed: Bool { closed && !hasBufferedMessage }
}
