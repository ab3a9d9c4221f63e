import Model
import Testing

@Suite struct InterfaceTests {
    @Test func declarationIsKeptInOrder() {
        let interface = Counter.erasedInterface
        #expect(interface.name == "counter")
        #expect(interface.summary == "Counts ticks.")
        #expect(interface.properties.map(\.name) == ["count", "label"])
        #expect(interface.properties.map(\.type) == ["integer", "string or nil"])
        #expect(interface.methods.map(\.name) == ["add", "rename", "fail", "reset"])
        #expect(interface.events.map(\.name) == ["didReset", "didTick"])
        #expect(interface.event("didTick")?.payload == "integer")
        #expect(interface.event("didTick")?.summary == "One tick, with the new count.")
        #expect(interface.property("nope") == nil)
        #expect(interface.method("nope") == nil)
        #expect(interface.event("nope") == nil)
    }

    @Test func typedDeclarationMatchesTheErasedOne() {
        let typed = Counter.declaration
        #expect(typed.properties.map(\.name) == ["count", "label"])
        #expect(typed.methods.map(\.name) == ["add", "rename", "fail", "reset"])
        #expect(typed.events.map(\.name) == ["didReset", "didTick"])
        let counter = Counter(count: 4)
        #expect(typed.properties[0].read(counter) == 4)
    }

    @Test func erasedPropertiesReadTheObject() throws {
        let counter = Counter(count: 7, label: "seven")
        let count = try #require(counter.interface.property("count"))
        let label = try #require(counter.interface.property("label"))
        #expect(count.read(counter) == 7)
        #expect(label.read(counter) == "seven")
        counter.count.set(8)
        counter.label.set(nil)
        #expect(count.read(counter) == 8, "reads are live, not a snapshot of the declaration time")
        #expect(label.read(counter) == .null)
    }

    @Test func immediateBodyRunsWithArguments() throws {
        let counter = Counter(count: 1)
        let add = try #require(counter.interface.method("add"))
        guard case .immediate(let run) = add.body else {
            Issue.record("add is immediate")
            return
        }
        #expect(try run(counter, Arguments([5])) == 6)
        #expect(counter.count.value == 6)
        #expect(try run(counter, Arguments([2.0])) == 8, "an exact float is an integer")
        #expect(throws: ServiceError(.invalidArgument, "n must be an integer, got string")) {
            try run(counter, Arguments(["x"]))
        }
        #expect(counter.count.value == 8)
    }

    @Test func asyncBodyRunsWithArguments() async throws {
        let counter = Counter(label: "old")
        let rename = try #require(counter.interface.method("rename"))
        guard case .async(let run) = rename.body else {
            Issue.record("rename is async")
            return
        }
        #expect(try await run(counter, Arguments(["new"])) == "old")
        #expect(counter.label.value == "new")
        #expect(try await run(counter, Arguments([])) == "new", "a missing optional argument is nil")
        #expect(counter.label.value == nil)
    }

    @Test func asyncBodyThrowsServiceErrors() async throws {
        let counter = Counter()
        let fail = try #require(counter.interface.method("fail"))
        guard case .async(let run) = fail.body else {
            Issue.record("fail is async")
            return
        }
        await #expect(throws: ServiceError(.unavailable, "never works")) {
            try await run(counter, Arguments([]))
        }
    }

    @Test func actionRunsAndReturnsNull() throws {
        let counter = Counter(count: 3)
        let log = ChangeLog(counter)
        let reset = try #require(counter.interface.method("reset"))
        #expect(!reset.hasCompletion)
        guard case .immediate(let run) = reset.body else {
            Issue.record("actions run at once")
            return
        }
        #expect(try run(counter, Arguments([])) == .null)
        #expect(counter.count.value == 0)
        #expect(log.take().map(\.text) == ["count=0", "didReset(nil)"])
    }

    @Test func actionErrorsPropagate() throws {
        final class Box: Sendable {}
        let interface = Interface<Box>(name: "box", summary: "") { d in
            d.action("open", [], "Never opens.", body: { _, _ throws(ServiceError) in
                throw ServiceError(.permission, "locked")
            })
        }.erased
        guard case .immediate(let run) = try #require(interface.method("open")).body else {
            Issue.record("actions run at once")
            return
        }
        #expect(throws: ServiceError(.permission, "locked")) { try run(Box(), Arguments([])) }
    }

    @Test func trailingClosureDeclaresAnImmediateMethod() throws {
        final class Box: Sendable {}
        let interface = Interface<Box>(name: "box", summary: "") { d in
            d.method("echo", [ArgumentSpec("x", .any, "")], returns: "x", "Echoes.") { _, arguments throws(ServiceError) in
                arguments[0]
            }
        }.erased
        guard case .immediate(let run) = try #require(interface.method("echo")).body else {
            Issue.record("a synchronous trailing closure picks the immediate overload")
            return
        }
        #expect(try run(Box(), Arguments(["hi"])) == "hi")
    }

    @Test func emptyInterface() {
        final class Box: Sendable {}
        let interface = Interface<Box>(name: "box", summary: "Nothing.").erased
        #expect(interface.properties.isEmpty && interface.methods.isEmpty && interface.events.isEmpty)
        #expect(interface.name == "box")
    }
}
