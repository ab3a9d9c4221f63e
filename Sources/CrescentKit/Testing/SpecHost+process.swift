import Foundation
import LuaBridge
import Model
import Services

extension SpecHost {
    /// Answers a program the code under test runs from the spec's `fake.process` answers:
    /// `runner.process(request)` gets `{ command, argv, cwd, env, stdin, shell }` and returns
    /// `{ status, signal, stdout, stderr, duration }`, or nil and an error. `place` (`app.lua:5: `)
    /// is where the script ran it, for an answer that does not match. With the seconds the
    /// faked program takes (0 but for an answer's `duration`).
    func answer(_ spec: ProcessSpec, at place: String?) -> (Result<ProcessOutcome, ServiceError>, duration: Double) {
        let (result, duration) = answerNow(spec, at: place)
        return (result, duration ?? 0)
    }

    private func answerNow(_ spec: ProcessSpec, at place: String?) -> (Result<ProcessOutcome, ServiceError>, Double?) {
        guard host.isRunning, let processHandler else { return (.failure(ServiceError(.cancelled, "the test has ended")), nil) }
        let stack = host.vm.stack
        let base = stack.top
        defer { stack.setTop(base) }
        processHandler.push(onto: stack)                                     // process
        // `sh -c LINE` is known by its line, as a script wrote it with shell = true; other argv
        // by its words as a shell would read them, so `{ "echo", "a b" }` (`echo 'a b'`) and
        // `{ "echo", "a", "b" }` (`echo a b`) are told apart as the programs tell them apart.
        let command = spec.shell ? spec.argv.last ?? "" : spec.argv.map(Self.shellWord).joined(separator: " ")
        // Words, folder and values as the script gave them: text, or bytes that are not UTF-8.
        func string(_ bytes: [UInt8]) -> Value { String(validating: bytes, as: UTF8.self).map(Value.string) ?? .bytes(bytes) }
        var environment: Fields = [:]
        for (name, value) in spec.environmentBytes { environment[name] = value.map(string) ?? .bool(false) }
        host.binding.push(.object([
            "command": .string(command), "argv": .array(spec.argvBytes.map(string)), "cwd": spec.cwdBytes.map(string) ?? .null,
            "env": .object(environment), "stdin": spec.stdin.map(Value.bytes) ?? .null, "shell": .bool(spec.shell),
        ]), onto: stack)                                                     // process request
        if let place { stack.push(place) } else { stack.pushNil() }          // process request place
        do throws(LuaError) {
            try host.vm.call(arguments: 2, results: 2)                       // answer err
        } catch {
            return (.failure(ServiceError(.internal, error.message)), nil)
        }
        let answer = host.binding.convertedValue(at: -2, in: stack).value
        guard case .object = answer else { return (.failure(Self.error(host.binding.convertedValue(at: -1, in: stack).value)), nil) }
        var outcome = ProcessOutcome(status: answer["status"].integerValue.map { Int($0) }, signal: answer["signal"].stringValue)
        if outcome.status == nil && outcome.signal == nil { outcome.status = 0 }
        outcome.stdout = Self.bytes(answer["stdout"])
        outcome.stderr = Self.bytes(answer["stderr"])
        outcome.timedOut = answer["timedOut"].boolValue ?? false
        return (.success(outcome), answer["duration"].doubleValue)
    }

    /// `word` as a POSIX shell reads it back as one word: as is when it holds only characters
    /// no shell treats specially, else single-quoted (`it's` is `'it'\''s'`).
    static func shellWord(_ word: String) -> String {
        let plain = !word.isEmpty && word.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || "_@%+=:,./-".unicodeScalars.contains(scalar))
        }
        return plain ? word : "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    private static func bytes(_ value: Value) -> [UInt8] {
        switch value {
        case .bytes(let bytes): bytes
        case .string(let text): Array(text.utf8)
        default: []
        }
    }
}
