import LuaBridge

extension Host {
    /// What a chunk typed at a prompt (the REPL's, a remote `eval`) compiles to.
    enum CompiledChunk {
        /// The chunk's function is on top of the VM's stack.
        case function
        /// A syntax error at the end of the text: more lines may complete it.
        case incomplete(LuaError)
        case failed(LuaError)
    }

    /// Compiles `text` as `return <text>` first, so an expression gives its value, then as a
    /// statement. `=expr` is `return expr`, as in `lua5.4`.
    ///
    /// An expression's values are handed through a function (`return (function(...) return ...
    /// end)(<text>)`): `return app.push("Tick")` would be a tail call, which takes the chunk's
    /// own frame off the stack, so an error the call raises for its caller (`error(message, 2)`)
    /// named no line of what was typed, only host frames.
    func compileChunk(_ text: String, chunkName: String) -> CompiledChunk {
        let source = text.hasPrefix("=") ? "return " + text.dropFirst() : text
        if (try? vm.load(Array(("return " + source).utf8), name: chunkName)) != nil {
            // Only a text that is a `return` list is wrapped (`x)(y` would be a call once
            // wrapped). The closing parenthesis goes on the text's last line: Lua emits the code
            // of the last argument when it reads the `)`, so on a line of its own every error in
            // that argument named a line the text does not have (`stdin:2:` for one line). A
            // `--` comment the text ends with would swallow it, so it goes before the comment.
            // One that is not an argument list (`x;`) keeps the plain form.
            let opening = "return (function(...) return ... end)("
            let loaded = Self.withoutTrailingComment(source).contains {
                (try? vm.load(Array((opening + $0 + ")").utf8), name: chunkName)) != nil
            } || (try? vm.load(Array((opening + source + "\n)").utf8), name: chunkName)) != nil
            guard loaded else { return .function }
            // The plain form, under the wrapped one, goes.
            vm.stack.remove(at: -2)
            return .function
        }
        do throws(LuaError) {
            try vm.load(Array(source.utf8), name: chunkName)
            return .function
        } catch {
            return error.kind == .syntax && error.message.hasSuffix("<eof>") ? .incomplete(error) : .failed(error)
        }
    }

    /// `text`, then `text` cut before each `--` of its last line that does not open a long
    /// comment: the one that compiles first (after a `)`) ended the text in a line comment. A
    /// cut inside a string or a long comment leaves it unfinished, so it never compiles.
    private static func withoutTrailingComment(_ text: String) -> [Substring] {
        let lastLine = text.lastIndex(of: "\n").map { text.index(after: $0) } ?? text.startIndex
        var cuts: [Substring] = [text[...]]
        var position = lastLine
        while let dashes = text[position...].firstRange(of: "--") {
            let rest = text[dashes.upperBound...]
            let opensLongComment = rest.first == "[" && rest.dropFirst().drop(while: { $0 == "=" }).first == "["
            if !opensLongComment { cuts.append(text[..<dashes.lowerBound]) }
            position = dashes.upperBound
        }
        return cuts
    }

    /// The `count` values on top of `stack` as `inspect` (the prelude's, kept in `inspect`) shows
    /// them, tab-separated as `lua5.4` prints them. Trailing nils after the first value are left
    /// out: an awaited call returns `result, nil`, and the nil says nothing. With `width` (a
    /// terminal's columns), tables and records fold between fields to fit it.
    func describeValues(_ count: Int32, on stack: LuaStack, inspect: LuaRef, width: Int? = nil) -> String {
        let main = vm.stack
        var texts: [String] = []
        let first = stack.top - count + 1
        var last = stack.top
        while last > first && stack.type(at: last) == .nil { last -= 1 }
        for index in first...last {
            if let atom = Self.plainAtom(at: index, on: stack) {
                texts.append(atom)
                continue
            }
            inspect.push(onto: main)
            stack.pushValue(at: index)
            stack.move(1, to: main)
            if let width {
                main.newTable(fieldCount: 1)                          // inspect value opts
                main.push(Int64(max(20, width - 1)))
                main.rawSet(-2, "width")
            }
            do throws(LuaError) {
                try vm.call(arguments: width == nil ? 1 : 2, results: 1)
                texts.append(main.text(at: -1) ?? main.describe(at: -1))
            } catch {
                texts.append("<cannot show the value: \(error.message)>")
            }
            main.pop()
        }
        return texts.joined(separator: "\t")
    }

    /// What `inspect` shows for nil, a boolean or an integer, which no option changes (it writes
    /// them as `tostring` and `%d` do): answered here without a Lua call and its garbage, the
    /// common answer of an eval. Nil for anything else.
    private static func plainAtom(at index: Int32, on stack: LuaStack) -> String? {
        switch stack.type(at: index) {
        case .nil: "nil"
        case .boolean: stack.boolean(at: index) ? "true" : "false"
        // math.mininteger's digits read back as a float: inspect writes its name.
        case .number: stack.isInteger(at: index) ? stack.integer(at: index).flatMap { $0 == .min ? nil : String($0) } : nil
        default: nil
        }
    }

    /// Forgets a Ctrl-C interrupt that is still pending once no Lua code runs (it arrived as the
    /// code it was meant for finished). Exit, time-limit and signal interrupts stay.
    func clearStrayInterrupt() {
        if vm.isRunningCodeInterruptPending { vm.clearInterrupt() }
        for runtime in pluginRuntimes { runtime.host.clearStrayInterrupt() }
    }
}
