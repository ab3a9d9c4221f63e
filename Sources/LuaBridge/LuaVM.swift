public import CLua
public import Dispatch
import Synchronization

/// One Lua 5.4 state and everything the bridge keeps for it.
///
/// The VM is confined to one serial executor (the host loop): it is deliberately not `Sendable`.
/// It opens the standard libraries, installs the interrupt hook and, when `memoryLimit` is set,
/// limits the bytes Lua may allocate.
///
/// **Out of memory.** When Lua code asks for memory past the limit, the allocation fails and Lua
/// raises its memory error inside the protected call that is running, which reports
/// ``LuaError/Kind/memory``. While Swift code runs (inside an exported function or the host), an
/// allocation past the limit succeeds instead (failing would longjmp through Swift frames) and the
/// trampoline raises the memory error as soon as that Swift function has returned to Lua. Only a
/// refusal by the system allocator itself outside any protected call aborts the process, as it
/// would for any Swift program.
///
/// ```swift
/// let vm = try LuaVM(memoryLimit: 64 << 20)
/// try vm.run("x = 1 + 1", name: "=example")
/// ```
public final class LuaVM {
    /// The main thread's state.
    public let state: OpaquePointer
    /// Distinguishes this VM from earlier ones in the same process, for ``LuaRefToken``.
    public let generation: UInt64
    /// False after ``close()``.
    public private(set) var isOpen = true
    /// References handed out and not yet released.
    public private(set) var liveReferences = 0

    let interruptFlag: InterruptFlag
    /// The line hook ``setLineHook(_:)`` set, which a kept coroutine gets back when its own
    /// hook is dropped (``LuaCoroutine/dropHook()``).
    var lineHook: LuaLineHook?
    var functionBoxes: [LuaFunctionBox] = []
    /// The notice handler's closure, kept as long as the flag may call it (``setNoticeHandler(_:)``).
    private var noticeBox: NoticeBox?
    // Not one dictionary keyed by `AnyHashable`: the first use of a generic type the Swift runtime
    // has not built yet costs a scan of every protocol conformance in the binary (about 0.14 ms),
    // and every host makes its object types at start-up. By class, a short list searched in order
    // (a VM has a few dozen types, made once each).
    var objectTypesByType: [(type: ObjectIdentifier, objectType: AnyObject)] = []
    var objectTypesByKey: [String: AnyObject] = [:]
    private static let generations = Atomic<UInt64>(0)

    /// Creates a VM. `memoryLimit` is in bytes; nil means unlimited.
    public init(memoryLimit: Int? = nil) throws(LuaError) {
        let flag = InterruptFlag()
        guard let state = crescent_newstate(memoryLimit.map { max($0, 0) } ?? 0, flag.pointer) else {
            throw LuaError(.memory, "cannot create a Lua state: not enough memory")
        }
        self.state = state
        interruptFlag = flag
        generation = Self.generations.add(1, ordering: .relaxed).newValue
    }

    deinit {
        if noticeBox != nil { crescent_flag_set_notice_handler(interruptFlag.pointer, nil, nil) }
        close()
    }

    /// How long the finalizers that run at ``close()`` may take before they are interrupted.
    public static let closeLimit = DispatchTimeInterval.seconds(closeLimitSeconds)
    /// ``closeLimit`` in seconds, for messages.
    public static let closeLimitSeconds = 2

    /// The finalizers that failed while ``close()`` ran them: how many, and the first one's error.
    public struct FinalizerFailures: Sendable {
        /// How many `__gc` calls raised an error or were stopped.
        public let count: Int
        /// The first one's error, naming the function's `file:line` when it is a script's (a
        /// loop stopped at ``closeLimit``: `the __gc function defined at spec.lua:3 was still
        /// running and was stopped`).
        public let first: String
    }

    /// What went wrong in the finalizers ``close()`` ran; nil before it, or when none failed. Lua
    /// itself only warns of an error in a `__gc`, and the state drops warnings.
    public private(set) var finalizerFailures: FinalizerFailures?

    /// Closes the state: runs every pending `__gc` and frees all memory. Idempotent. A finalizer
    /// still running ``closeLimit`` after the close began is interrupted (as the time limit
    /// interrupts code), and so is each one after it, so a `__gc` that loops cannot hold the
    /// closing thread (a host's end, a plugin's stop) for ever. The finalizers that failed or were
    /// stopped are then in ``finalizerFailures``.
    public func close() {
        guard isOpen else { return }
        isOpen = false
        let watch = CloseWatch(interrupter)
        watch.start(after: Self.closeLimit)
        var first = [CChar](repeating: 0, count: 2048)
        let failed = crescent_close(state, &first, first.count)
        watch.end()
        if failed > 0 {
            let warning = String(decoding: first.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            finalizerFailures = FinalizerFailures(count: Int(failed), first: Self.unwrapped(warning))
        }
        liveReferences = 0  // the registry is gone with the state
        functionBoxes.removeAll()
        objectTypesByType.removeAll()
        objectTypesByKey.removeAll()
    }

    /// The finalizers that failed while the state ran since the last call (a `__gc` that raised
    /// as the collector ran it): how many and the first one's error; nil when none did. Lua itself
    /// only warns of them, and the state drops warnings.
    public func takeFinalizerFailures() -> FinalizerFailures? {
        guard isOpen else { return nil }
        var first = [CChar](repeating: 0, count: 1024)
        let failed = crescent_take_finalizer_failures(state, &first, first.count)
        guard failed > 0 else { return nil }
        let warning = String(decoding: first.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return FinalizerFailures(count: Int(failed), first: Self.unwrapped(warning))
    }

    /// The message inside Lua's warning `error in __gc (MESSAGE)` (`__gc metamethod` before Lua 5.4.6).
    private static func unwrapped(_ warning: String) -> String {
        for prefix in ["error in __gc metamethod (", "error in __gc ("] where warning.hasPrefix(prefix) {
            let message = warning.dropFirst(prefix.count)
            return String(message.hasSuffix(")") ? message.dropLast() : message)
        }
        return warning
    }

    /// The main thread's stack.
    @inlinable public var stack: LuaStack { LuaStack(state) }

    /// Bytes currently allocated by Lua.
    public var memoryUsed: Int { Int(crescent_memory_used(state)) }

    /// The allocation limit in bytes (0: none).
    public var memoryLimit: Int {
        get { Int(crescent_memory_limit(state)) }
        set { crescent_set_memory_limit(state, max(newValue, 0)) }
    }

    /// Whether Swift has left Lua holding more than ``memoryLimit`` bytes (the next Lua code to
    /// run would raise the memory error).
    public var isOverMemoryLimit: Bool {
        let limit = memoryLimit
        return limit > 0 && memoryUsed > limit
    }

    /// Runs a full garbage collection: frees what values Swift pushed and then dropped took.
    public func collectGarbage() { crescent_collect_garbage(state) }

    /// Runs `body` with the collector stopped, restarting it after (if it ran before, see
    /// ``resumeCollector()``). For work that only builds what stays, such as loading the prelude:
    /// the collector's steps meanwhile mark and sweep the new objects and free nothing.
    public func withCollectorPaused<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        let paused = pauseCollector()
        defer { if paused { resumeCollector() } }
        return try body()
    }

    /// Stops the collector, for code that cannot wrap its work in ``withCollectorPaused(_:)`` (an
    /// initializer); true when it was running, and then the caller restarts it with
    /// ``resumeCollector()``.
    public func pauseCollector() -> Bool { crescent_pause_collector(state) != 0 }

    /// Restarts the collector ``pauseCollector()`` stopped, as after a completed cycle: what was
    /// built meanwhile is live, so the next cycle starts once the heap has grown by its present
    /// size (Lua's default pause; at most a quarter of the room left under the memory limit), not
    /// at the next allocation.
    public func resumeCollector() { crescent_resume_collector(state) }

    /// What the memory error names as the way to raise the limit (`--memory-limit` when
    /// empty): a plugin's VM says `[plugins] memory_limit`, the setting that gives its limit.
    public var memoryLimitSetting: String {
        get { crescent_memory_limit_setting(state).map { String(cString: $0) } ?? "" }
        set { crescent_set_memory_limit_setting(state, newValue) }
    }

    // MARK: References

    /// Pops the top value of `stack` (the main stack by default) and pins it in the registry.
    public func ref(from stack: LuaStack? = nil) -> LuaRef {
        let state = stack?.state ?? self.state
        let type = LuaType(rawValue: lua_type(state, -1)) ?? .nil
        let id = crescent_ref(state)
        liveReferences += 1
        return LuaRef(id: id, type: type, vm: self)
    }

    /// Pops the top value and pins it, returning only the registry slot (for compact storage;
    /// release it with ``unref(_:)``).
    public func refID(from stack: LuaStack? = nil) -> Int32 {
        liveReferences += 1
        return crescent_ref((stack ?? self.stack).state)
    }

    /// Releases a slot from ``refID(from:)``.
    public func unref(_ id: Int32) {
        guard isOpen else { return }
        liveReferences -= 1
        crescent_unref(state, id)
    }

    /// Pushes the value a token names when the token belongs to this VM and it is still open.
    public func push(_ token: LuaRefToken) -> Bool {
        guard isOpen, token.generation == generation else { return false }
        _ = crescent_getref(state, token.id)
        return true
    }

    // MARK: Globals

    /// Sets a global with a raw write.
    public func setGlobal(_ name: String, _ value: LuaValue) {
        stack.push(value)
        setGlobal(name)
    }

    /// Pops the top value into global `name` with a raw write.
    public func setGlobal(_ name: String) {
        stack.pushGlobals()
        lua_rotate(state, -2, 1)           // globals value
        stack.rawSet(-2, name)             // globals
        stack.pop()
    }

    /// Pushes global `name` with a raw read.
    @discardableResult
    public func getGlobal(_ name: String) -> LuaType {
        stack.pushGlobals()
        let type = stack.rawGet(-1, name)  // globals value
        lua_rotate(state, -2, 1)
        stack.pop()
        return type
    }

    // MARK: Running code

    /// Compiles `source` and pushes the chunk as a function.
    ///
    /// Text only by default: precompiled bytecode is refused here as in `load`, `loadfile`,
    /// `dofile` and `require` (Lua does not verify bytecode, and a crafted chunk can crash the VM).
    ///
    /// - Parameters:
    ///   - name: the chunk name: `@file.lua` for files (messages then say `file.lua:3:`),
    ///     `=label` for other sources.
    ///   - mode: `"b"` only for bytecode this process dumped itself or its binary embeds (the
    ///     prelude); never for bytes that came from outside.
    public func load(_ source: [UInt8], name: String, mode: String = "t") throws(LuaError) {
        guard stack.ensure(2) else { throw LuaError(.memory, "stack overflow") }
        let status = source.withUnsafeBufferPointer { bytes in
            UnsafeRawPointer(bytes.baseAddress).map {
                crescent_load(state, $0.assumingMemoryBound(to: CChar.self), bytes.count, name, mode)
            } ?? crescent_load(state, "", 0, name, mode)
        }
        if status != LUA_OK { throw stack.popError(status) }
    }

    /// The Lua function on top of the stack as a binary chunk (what `string.dump` makes), debug
    /// information kept; nil when it cannot be dumped (a C function). `lua_dump` only calls the
    /// writer below, which never raises, so no Lua error can cross this Swift frame.
    public func dumpFunction() -> [UInt8]? {
        var bytes: [UInt8] = []
        let status = withUnsafeMutablePointer(to: &bytes) { buffer in
            lua_dump(state, { _, data, size, target in
                guard let data, let target else { return 1 }
                target.assumingMemoryBound(to: [UInt8].self).pointee.append(contentsOf: UnsafeRawBufferPointer(start: data, count: size))
                return 0
            }, buffer, 0)
        }
        return status == 0 && !bytes.isEmpty ? bytes : nil
    }

    /// Calls the function below the `arguments` values on top, with a traceback handler.
    /// On success the results replace the function and arguments.
    @inlinable
    public func call(arguments: Int32, results: Int32) throws(LuaError) {
        let status = crescent_pcall(state, arguments, results)
        if status != LUA_OK { throw stack.popError(status) }
    }

    /// Compiles and runs `source`, leaving `results` results on the stack.
    public func run(_ source: String, name: String = "=crescent", results: Int32 = 0) throws(LuaError) {
        try load(Array(source.utf8), name: name)
        try call(arguments: 0, results: results)
    }

    /// Calls a pinned function with one integer and returns its first result as an integer.
    @inlinable
    public func call(_ function: LuaRef, _ argument: Int64) throws(LuaError) -> Int64? {
        _ = crescent_getref(state, function.id)
        lua_pushinteger(state, lua_Integer(argument))
        try call(arguments: 1, results: 1)
        defer { lua_settop(state, -2) }
        return stack.integer(at: -1)
    }

    /// Calls a pinned function with `arguments` and returns its results as Swift values.
    public func call(_ function: LuaRef, _ arguments: [LuaValue]) throws(LuaError) -> [LuaValue] {
        let base = stack.top
        guard stack.ensure(Int32(clamping: arguments.count) + 2) else { throw LuaError(.memory, "stack overflow") }
        function.push(onto: stack)
        for argument in arguments { stack.push(argument) }
        try call(arguments: Int32(arguments.count), results: LUA_MULTRET)
        defer { stack.setTop(base) }
        var results: [LuaValue] = []
        for index in (base + 1)...max(stack.top, base + 1) where index <= stack.top {
            results.append((try? stack.value(at: index, vm: self)) ?? .nil)
        }
        return results
    }

    // MARK: Interrupts

    /// Asks running Lua code to stop. Safe from any thread through ``interrupter``.
    public var interrupter: LuaInterrupter { LuaInterrupter(flag: interruptFlag) }

    /// The pending interrupt: 0 none, 2 time limit, 3 exit, 128 and above a signal's exit status.
    public var pendingInterrupt: Int32 { crescent_interrupt_pending(state) }

    /// True when the pending interrupt is the one ``LuaInterrupter/interruptRunningCode()`` asks
    /// for (a Ctrl-C or a stop of the running code), not an exit, a time limit or an exit status.
    public var isRunningCodeInterruptPending: Bool { pendingInterrupt == Int32(CRESCENT_INTERRUPT_SIGNAL) }

    /// Forgets a pending interrupt so later code runs normally.
    public func clearInterrupt() { crescent_clear_interrupt(state) }

    /// Sets what runs, on the thread that runs this VM's Lua code and inside that code, when
    /// ``LuaInterrupter/notice()`` is asked for while Lua code holds the thread: the host draws
    /// there what its loop, held by a script's `while true do end`, cannot. `handler` must not
    /// use the VM. Replaces the one set before.
    public func setNoticeHandler(_ handler: @escaping () -> Void) {
        let box = NoticeBox(handler)
        noticeBox = box
        crescent_flag_set_notice_handler(interruptFlag.pointer, { context in
            guard let context else { return }
            Unmanaged<NoticeBox>.fromOpaque(context).takeUnretainedValue().handler()
        }, Unmanaged.passUnretained(box).toOpaque())
    }

    /// The time limit's message with the traceback of where it first stopped the running code
    /// (the script's line), or nil when it has stopped none. The error that comes out of the
    /// code was raised again in its outermost frame, which is all its own traceback shows.
    public var timeLimitTraceback: String? {
        guard crescent_push_interrupted_at(state) == 1 else { return nil }
        defer { stack.pop() }
        return stack.text(at: -1)
    }
}

/// Owns the interrupt flag the VM's count hook reads. Kept apart from the state so that a late
/// signal or time limit may still set it after the state has closed.
final class InterruptFlag: Sendable {
    // Safe to share: the C flag is a single atomic int, written and read only with atomics.
    nonisolated(unsafe) let pointer: OpaquePointer

    init() {
        // Invariant: a 4-byte calloc failing means the process is already out of memory.
        pointer = crescent_flag_new()!
    }

    deinit { crescent_flag_free(pointer) }
}

/// Stops running Lua code from another thread or a signal handler: a flag the count hook checks.
public struct LuaInterrupter: Sendable {
    let flag: InterruptFlag

    /// Interrupts for a signal; `status` (130, 143) is what the host should exit with.
    public func interrupt(status: Int32 = 130) { crescent_flag_set(flag.pointer, max(status, 128)) }
    /// Interrupts because the time limit was reached.
    public func interruptForTimeout() { crescent_flag_set(flag.pointer, Int32(CRESCENT_INTERRUPT_TIMEOUT)) }
    /// Interrupts because the script asked to exit.
    public func interruptForExit() { crescent_flag_set(flag.pointer, Int32(CRESCENT_INTERRUPT_EXIT)) }
    /// Interrupts the running code without asking the host to exit: the REPL's Ctrl-C, after which
    /// the host clears the flag and carries on.
    public func interruptRunningCode() { crescent_flag_set(flag.pointer, Int32(CRESCENT_INTERRUPT_SIGNAL)) }
    /// Calls the VM's notice handler (``LuaVM/setNoticeHandler(_:)``) inside the Lua code running
    /// now, which goes on; nothing when no Lua code runs.
    public func notice() { crescent_flag_notify(flag.pointer) }
}

/// The closure a VM's notice handler calls.
final class NoticeBox {
    let handler: () -> Void
    init(_ handler: @escaping () -> Void) { self.handler = handler }
}

/// Interrupts the finalizers of a state being closed once they have run past their limit, every
/// ``tick`` until the close has ended.
private final class CloseWatch: Sendable {
    static let tick = DispatchTimeInterval.milliseconds(100)
    private let interrupter: LuaInterrupter
    private let ended = Atomic<Bool>(false)

    init(_ interrupter: LuaInterrupter) { self.interrupter = interrupter }

    func start(after limit: DispatchTimeInterval) {
        DispatchQueue.global().asyncAfter(deadline: .now() + limit) { [self] in fire() }
    }

    private func fire() {
        guard !ended.load(ordering: .acquiring) else { return }
        interrupter.interruptForTimeout()
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.tick) { [self] in fire() }
    }

    func end() { ended.store(true, ordering: .releasing) }
}
