import CLua
import LuaBridge
import Model

extension RemoteServer {
    /// While a client's eval runs, `print` writes to that client (an `output { text }`
    /// notification) instead of the host's output: the chunk's output belongs with its value.
    /// The global is swapped around each resume of the chunk's task and put back after, unless
    /// the chunk assigned `print` itself.
    func beginOutput(to connection: RemoteConnection) {
        outputTarget = connection
        let stack = host.vm.stack
        if capturingPrint == nil {
            host.vm.pushFunction { [unowned self] stack in
                var bytes: [UInt8] = []
                try Host.writeJoined(stack, from: 1) { bytes.append(contentsOf: $0) }
                bytes.append(UInt8(ascii: "\n"))
                let text = String(decoding: bytes, as: UTF8.self)
                self.outputTarget?.send(.notification(method: "output", params: ["text": .string(text)]))
                return .none
            }
            capturingPrint = host.vm.ref()
        }
        host.vm.getGlobal("print")                                   // print
        savedPrint = host.vm.ref()
        capturingPrint?.push(onto: stack)                             // capture
        host.vm.setGlobal("print")
    }

    /// Puts the host's `print` back after a resume of the chunk.
    func endOutput() {
        outputTarget = nil
        guard let saved = savedPrint, let capturing = capturingPrint else { return }
        savedPrint = nil
        let stack = host.vm.stack
        host.vm.getGlobal("print")                                   // current
        capturing.push(onto: stack)                                   // current capture
        let unchanged = lua_rawequal(stack.state, -1, -2) != 0
        stack.pop(2)
        guard unchanged else { return }
        saved.push(onto: stack)                                       // saved
        host.vm.setGlobal("print")
    }
}
