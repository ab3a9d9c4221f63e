import LuaBridge
import Model
import NIOCore

extension Host {
    /// Installs `task(fn, ...)` and `sleep(seconds)`.
    func installTasks() {
        _ = vm.objectType(
            LuaTask.self, name: "Task",
            methods: [
                "cancel": { [unowned self] stack in
                    let task = try self.taskType.checkSelf(in: stack, function: "cancel")
                    try ExtraArguments.check(stack, takes: 1, signature: "task:cancel()", arity: "none", isMethod: true)
                    self.cancel(task)
                    return .none
                },
            ],
            getter: { [unowned self] stack in
                guard let task = self.taskType.object(at: 1, in: stack) else { return .none }
                switch stack.text(at: 2) {
                case "done": stack.push(task.isDone)
                case "result": if let result = task.result { result.push(onto: stack) } else { stack.pushNil() }
                case "error": if let error = task.error { error.push(onto: stack) } else { stack.pushNil() }
                default:
                    try UndeclaredField.check(stack.text(at: 2), on: "Task", fields: ["done", "result", "error"],
                                              methods: ["cancel"], in: stack)
                    stack.pushNil()
                }
                return .one
            },
            metamethods: [
                "__tostring": { [unowned self] stack in
                    guard let task = self.taskType.object(at: 1, in: stack) else { return .none }
                    let state = !task.isDone ? "running" : (task.error != nil ? "failed" : "done")
                    stack.push("Task(\(state))")
                    return .one
                },
            ]
        )
        vm.register("task", taskFunction(ownsSpawns: true))
        vm.register("sleep") { [unowned self] stack in
            let seconds = try stack.checkNumber(1, function: "sleep")
            guard seconds.isFinite, seconds >= 0 else {
                throw LuaRaise.badArgument(1, to: "sleep", "seconds must be a finite number >= 0, got \(NumberText.shown(seconds))")
            }
            try ExtraArguments.check(stack, takes: 1, signature: "sleep(seconds)", arity: "seconds")
            guard let task = self.currentTask, task.coroutine.thread == stack.state, stack.isYieldable else {
                throw LuaRaise("sleep: not inside a task; wrap the code in task(function() ... end) or use timer.after(s, fn)")
            }
            self.wake(task, after: seconds)
            return .yield(0)
        }
    }

    var taskType: LuaObjectType<LuaTask> { vm.objectType(LuaTask.self, name: "Task") }

    /// `task(fn, ...)`. With `ownsSpawns` (the script's `task`), the programs its code spawns end
    /// with it; the controllers' methods run as tasks without it, so what they spawn belongs to
    /// the controller (`viewDidLoad` starting a program that runs while the view shows).
    /// With `contextFirst` the function is `task(context, fn, ...)`, whose error is reported
    /// under `context` rather than as a task's (a `{ latest = true }` handler's).
    func taskFunction(ownsSpawns: Bool, contextFirst: Bool = false) -> LuaFunctionBody {
        return { [unowned self] stack in
            let function: Int32 = contextFirst ? 2 : 1
            let context = try contextFirst ? stack.checkString(1, function: "task") : nil
            try stack.checkFunction(function, function: "task")
            let arguments = stack.top - function
            let task = self.startTask(function: function, arguments: arguments, in: stack)
            task.ownsSpawns = ownsSpawns
            task.errorContext = context
            if stack.isCFunction(at: function) {
                let place = stack.place(level: 1)
                task.startSite = place.isEmpty ? nil : place
            }
            self.taskType.push(task, onto: stack)
            self.resume(task, arguments: arguments)
            return .one
        }
    }

    /// How many finished coroutines are kept for the next tasks.
    static let idleCoroutineLimit = 16

    /// Makes a task of the function at `function` with the `arguments` values after it (copied
    /// onto the coroutine's stack), owned by the current scope. The caller resumes it.
    func startTask(function: Int32, arguments: Int32, in stack: LuaStack,
                   onEnd: ((LuaTask.Ending) -> Void)? = nil) -> LuaTask {
        stack.pushValue(at: function)
        let coroutine: LuaCoroutine
        if let idle = idleCoroutines.popLast() {
            stack.move(1, to: idle.stack)
            coroutine = idle
        } else {
            coroutine = LuaCoroutine(vm: vm, from: stack)
        }
        let task = LuaTask(coroutine: coroutine)
        if arguments > 0 {
            for index in (function + 1)...(function + arguments) { stack.pushValue(at: index) }
            stack.move(arguments, to: task.coroutine.stack)
        }
        task.hostLink = weakLink
        task.ownerLink = currentScope.weakLink
        task.scopeLink = currentScope.weakLink
        task.onEnd = onEnd
        currentScope.adopt(task)
        tasks.insert(task)
        return task
    }

    /// Arranges for `task` to resume after `seconds`.
    func wake(_ task: LuaTask, after seconds: Double) {
        task.arrangedResume()
        let host = link
        let boundTask = NIOLoopBound(task, eventLoop: loop)
        task.wakeup = clock.schedule(after: .seconds(seconds: seconds)) {
            host.turn { host in
                let task = boundTask.value
                task.wakeup = nil
                host.resume(task, arguments: 0)
            }
        }
    }

    /// Resumes `task` with the top `arguments` values of its stack and handles how it stopped.
    func resume(_ task: LuaTask, arguments: Int32) {
        guard task.begin() else { return }
        let previous = currentTask
        currentTask = task
        task.onResume?(true)
        let step = withScope(task.scope ?? task.owner) { task.coroutine.resume(arguments: arguments) }
        task.onResume?(false)
        currentTask = previous
        switch step {
        case .yielded(let count):
            task.coroutine.stack.pop(count)
            switch task.yielded() {
            case .finishCancelled:
                finishCancelled(task)
            case .resumeNextTurn:
                // A bare coroutine.yield() inside a task: give the loop a turn, then carry on.
                enqueue { host in host.resume(task, arguments: 0) }
            case .wait, .nothing:
                break
            }
        case .finished(let count):
            let stack = task.coroutine.stack
            if let onEnd = task.onEnd {
                onEnd(.returned(stack, count: count))
            } else if count > 0 {
                stack.pushValue(at: -count)
                stack.move(1, to: vm.stack)
                task.result = vm.ref()
            }
            stack.setTop(0)
            // A coroutine that returned can run another function: kept, the next task skips
            // making a thread and growing its stack and call frames again.
            let keep = idleCoroutines.count < Self.idleCoroutineLimit && task.coroutine.endedNormally
            task.invalidate(keepingCoroutine: keep)
            if keep {
                // A hook the task set (debug.sethook in a remote client's eval) must not fire in
                // the next task that runs on this thread.
                task.coroutine.dropHook()
                idleCoroutines.append(task.coroutine)
            }
            tasks.remove(task)
        case .failed(let error, let value):
            task.error = value
            task.invalidate()
            tasks.remove(task)
            if let onEnd = task.onEnd {
                onEnd(.failed(error))
            } else {
                var located = error
                if let site = task.startSite, error.kind == .runtime { located.message = site + error.message }
                reportHandlerError(located, in: task.errorContext ?? "error in task")
            }
        }
    }

    /// Cancels `task`: it is not resumed again, its error becomes "cancelled" and its pending
    /// to-be-closed variables are closed.
    func cancel(_ task: LuaTask) {
        guard !task.isDone else { return }
        if currentTask === task, task.requestCancel() { return }
        finishCancelled(task)
    }

    private func finishCancelled(_ task: LuaTask) {
        // Close its to-be-closed variables while the coroutine is still pinned.
        task.coroutine.reset()
        task.invalidate()
        tasks.remove(task)
        vm.stack.push("cancelled")
        task.error = vm.ref()
        task.onEnd?(.cancelled)
    }
}
