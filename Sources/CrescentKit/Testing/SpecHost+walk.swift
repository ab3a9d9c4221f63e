import LuaBridge
import Model
import NIOCore
import Services
import Synchronization

/// The walk of a spec file in its host's one Lua state: the describe bodies and teardowns it
/// reaches run as it goes, and each entry is handed to the runner in turn.
extension SpecHost {
    /// What the walk of the file reached next (``next()``).
    enum Step {
        /// An entry as ``list()`` lists one, and its 0-based index for ``run(_:)``.
        case entry(SpecCase, index: Int)
        /// A block's teardown hook failed as the walk left the block: busted's entry for it.
        case teardownFailed(name: String, message: String)
        /// The file is done.
        case done
        /// The walk stopped short: an error it did not catch, the time limit, an exit.
        case failed(String)
    }

    /// Goes on walking the file (running the describe bodies and teardowns it reaches) up to its
    /// next entry: the file's tests run one by one in this host's one Lua state, as busted runs them.
    func next() -> Step {
        var step = Step.done
        callRunner("next", results: 2) { host, stack, failure in
            if let failure {
                step = .failed(GlobalNameHint.hinted(failure.message, in: host.vm))
                return
            }
            let item = host.binding.convertedValue(at: -2, in: stack).value
            func text(_ value: Value) -> String? {
                switch value {
                case .string(let text): text
                case .bytes(let bytes): ByteText.shown(bytes)
                default: nil
                }
            }
            if let name = text(item["teardown"]) {
                step = .teardownFailed(name: name, message: text(item["message"]) ?? "")
                return
            }
            guard case .object = item, let index = stack.integer(at: -1) else { return }
            step = .entry(SpecCase(name: text(item["name"]) ?? "?", location: text(item["where"]) ?? "?",
                                   isPending: item["pending"].boolValue ?? false,
                                   isSelected: item["selected"].boolValue ?? true,
                                   blockError: text(item["error"]).map { GlobalNameHint.hinted($0, in: host.vm) },
                                   hooksOf: item["hooks"].integerValue.map { Int($0) }, isUnusedPlace: item["skip"].boolValue ?? false),
                          index: Int(index) - 1)
        }
        if let limit = pastTimeLimit { return .failed(limit) }
        if let exit = exitFailure { return .failed(exit) }
        if let status = host.exitStatus {
            return .failed("the spec file called app.exit(\(status)) while its describe blocks were read, so the tests after it "
                + "were never collected (end a test's script with app.exit inside an it, where it fails only that test)")
        }
        return step
    }

    /// The run's tags (`--tags`, `--exclude-tags`) that a name the walk has reached so far has,
    /// chosen or not: the run notes a tag no file has, which would otherwise go without a word
    /// when another one chose the tests.
    func tagged() -> [[UInt8]] {
        var tagged: [[UInt8]] = []
        callRunner("tagged", results: 1) { host, stack, failure in
            guard failure == nil, case .array(let tags) = host.binding.convertedValue(at: -1, in: stack).value else { return }
            tagged = tags.compactMap { tag in
                switch tag {
                case .string(let text): Array(text.utf8)
                case .bytes(let bytes): bytes
                default: nil
                }
            }
        }
        return tagged
    }

    /// Calls the file's runner function `name` (with `argument`, when given) in a turn of the host,
    /// hands its results (on top of the stack) or its error to `body`, and leaves the stack as it
    /// found it.
    func callRunner(_ name: String, argument: Int? = nil, results: Int32,
                    _ body: (Host, LuaStack, LuaError?) -> Void) {
        host.runTurn { host in
            guard let runner else { return }
            let stack = host.vm.stack
            let base = stack.top
            defer { stack.setTop(base) }
            runner.push(onto: stack)
            guard stack.rawGet(-1, name) == .function else { return }
            if let argument { stack.push(argument) }
            do throws(LuaError) { try host.vm.call(arguments: argument == nil ? 0 : 1, results: results) } catch {
                body(host, stack, error)
                return
            }
            body(host, stack, nil)
        }
    }
}
