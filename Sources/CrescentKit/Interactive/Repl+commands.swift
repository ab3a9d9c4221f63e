import LuaBridge
import Model
import LineEditing

extension Repl {
    /// Runs a dot command; the prompt comes back afterwards (after the file, for `.load`).
    func perform(_ command: DotCommand) {
        switch command {
        case .help:
            let columns = link.terminal.columns
            emit(DotCommand.helpText(width: columns > 0 ? columns : 80) + "\n")
        case .services(let name):
            switch ServiceCatalog.documentation(of: host.binding.services, name: name) {
            case .success(let text): emit(text + "\n")
            case .failure(let error): report(error.description)
            }
        case .subscriptions:
            emit(subscriptionList() + "\n")
        case .load(let path):
            do throws(ScriptReadError) {
                let bytes = try ScriptSource.file(path).read()
                run(String(decoding: bytes, as: UTF8.self), chunkName: "@" + path)
            } catch {
                report(".load: \(error.description)")
                later { $0.showPrompt() }
            }
            return
        case .editor:
            inEditor = true
            session.editor.submitsOnControlD = true
            emit("(editor: Enter adds a line, Ctrl-D runs the text, Ctrl-C cancels)\n")
        case .exit:
            quit(status: 0)
            return
        case .invalid(let message):
            report(message)
        }
        later { $0.showPrompt() }
    }

    /// The live subscriptions as `.subs` lists them.
    private func subscriptionList() -> String {
        let all = host.binding.registry.subscriptions
        guard !all.isEmpty else { return "No live subscriptions." }
        let rows = all.map { [$0.ownerName, $0.targetDescription, $0.site, String($0.deliveries), String($0.errors)] }
        let header = ["owner", "target", "created at", "deliveries", "errors"]
        let widths = header.indices.map { column in
            ([header] + rows).map { DisplayWidth.of($0[column]) }.max() ?? 0
        }
        return ([header] + rows).map { row in
            row.indices.map { DisplayWidth.pad(row[$0], to: widths[$0], alignRight: $0 >= 3) }
                .joined(separator: "  ").trimmingTrailingBlanks()
        }.joined(separator: "\n")
    }
}
