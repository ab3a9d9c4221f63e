import LuaBridge
import Model
import Synchronization

/// The clients that follow the host's output (`hello { output = true }`): each gets an
/// `output { text, base64?, stream }` notification (``RemoteOutput``) for everything the host
/// writes but the view's renders (which come as `render`). Shared with the console's tap, which
/// any thread may call.
final class OutputFollowers: Sendable {
    private let connections = Mutex<[Int: RemoteConnection]>([:])

    /// Adds `connection`; true when it is the first.
    func add(_ connection: RemoteConnection) -> Bool {
        connections.withLock { connections in
            connections[connection.id] = connection
            return connections.count == 1
        }
    }

    /// Removes `connection`; true when none is left.
    func remove(_ connection: RemoteConnection) -> Bool {
        connections.withLock { connections in
            connections[connection.id] != nil && connections.removeValue(forKey: connection.id) != nil && connections.isEmpty
        }
    }

    /// Whether `connection` follows the output (so it gets the host's stderr already).
    func contains(_ connection: RemoteConnection) -> Bool {
        connections.withLock { $0[connection.id] != nil }
    }

    func forward(_ stream: Console.Stream, _ bytes: [UInt8]) {
        let message = RemoteOutput.notification(bytes, stream: stream)
        for connection in connections.withLock({ Array($0.values) }) { connection.send(message) }
    }
}

extension RemoteServer {
    /// `hello { output = true }`: `connection` follows the host's output from now on. `io.write`
    /// and `io.stderr:write` then go through the console too (a script's go straight to the
    /// process's stdout and stderr until then), so the follower gets them, byte for byte.
    func follow(_ connection: RemoteConnection) {
        guard followers.add(connection) else { return }
        let followers = self.followers
        host.console.tap { stream, bytes in followers.forward(stream, bytes) }
        guard !routesStandardOutput else { return }
        routesStandardOutput = true
        do { try host.routeStandardOutputThroughConsole(standardError: true) } catch {
            host.writeError("\(host.console.styled("crescent:", .warning)) io.write does not reach the clients that follow the output: \(error)")
        }
    }

    /// `connection` is gone: it follows nothing.
    func unfollow(_ connection: RemoteConnection) {
        if followers.remove(connection) { host.console.tap(nil) }
    }

    /// What tells `connection` a line at once, as stderr output, though the loop is held (a
    /// permission question its request waits on): written and flushed now, on the loop.
    static func notice(to connection: RemoteConnection) -> (String) -> Void {
        { [weak connection] line in
            guard let connection else { return }
            _ = connection.send(RemoteOutput.notification(Array((line + "\n").utf8), stream: .error), ownOutput: true)
            connection.flush()
        }
    }

    /// While a client's eval runs, `print` writes to that client (an `output { text, stream }`
    /// notification) instead of the host's output: the chunk's output belongs with its value.
    /// (What the chunk starts, timers and handlers, prints to the host's output, which a client
    /// that follows it receives too.)
    /// The global is swapped around each resume of the chunk's task and put back after, unless
    /// the chunk assigned `print` itself.
    func beginOutput(to connection: RemoteConnection) {
        outputTarget = connection
        host.remoteNotice = Self.notice(to: connection)
        // What the host writes to stderr meanwhile (a warning the chunk caused: `V:loadVeiw is
        // not a lifecycle step`) goes to the client too, as stderr output, without colours.
        if !followers.contains(connection) {
            host.errorCopy = { [weak connection] line in
                _ = connection?.send(RemoteOutput.notification(Array((Console.unstyled(line) + "\n").utf8), stream: .error), ownOutput: true)
            }
        }
        let stack = host.vm.stack
        if printSlots == nil {
            stack.newTable(arrayCount: 2)
            host.vm.pushFunction { [unowned self] stack in
                var bytes: [UInt8] = []
                try Host.writeJoined(stack, from: 1) { bytes.append(contentsOf: $0) }
                bytes.append(UInt8(ascii: "\n"))
                self.outputTarget?.send(RemoteOutput.notification(bytes, stream: .output), ownOutput: true)
                return .none
            }
            stack.rawSet(-2, index: PrintSlot.capture)
            printSlots = host.vm.ref()
        }
        guard let slots = printSlots else { return }
        slots.push(onto: stack)                                       // slots
        host.vm.getGlobal("print")                                   // slots print
        stack.rawSet(-2, index: PrintSlot.saved)                      // slots
        _ = stack.rawGet(-1, index: PrintSlot.capture)                // slots capture
        host.vm.setGlobal("print")                                   // slots
        stack.pop()
        printSwapped = true
    }

    /// Puts the host's `print` back after a resume of the chunk.
    func endOutput() {
        outputTarget = nil
        host.remoteNotice = nil
        host.errorCopy = nil
        guard printSwapped, let slots = printSlots else { return }
        printSwapped = false
        let stack = host.vm.stack
        slots.push(onto: stack)                                       // slots
        host.vm.getGlobal("print")                                   // slots current
        _ = stack.rawGet(-2, index: PrintSlot.capture)                // slots current capture
        let unchanged = stack.rawEqual(-1, -2)
        stack.pop(2)                                                  // slots
        if unchanged {
            _ = stack.rawGet(-1, index: PrintSlot.saved)              // slots saved
            host.vm.setGlobal("print")                               // slots
        }
        stack.pushNil()
        stack.rawSet(-2, index: PrintSlot.saved)                      // slots
        stack.pop()
    }

    /// Where `printSlots` keeps the capturing `print` and, while it is swapped in, the host's:
    /// a table of our own rather than a registry reference made and dropped on every resume.
    enum PrintSlot {
        static let capture: Int64 = 1
        static let saved: Int64 = 2
    }
}
