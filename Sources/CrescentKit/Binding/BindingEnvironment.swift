import LuaBridge
import Model
import NIOCore

/// The host that owns a ``ModelBinding``, as the binding sees it: what it needs, by concern, and
/// nothing it would only hand back. The host conforms; the binding names no host type, so the
/// dependency goes one way (the host makes, holds and drives the binding).
///
/// What the binding reads on every call and delivery (the running scope and task, whether a
/// turn runs) is not here but in ``RunningCode``, a final class both hold.
typealias BindingEnvironment = BindingOutput & BindingLoop & BindingPlugins

/// Output and warnings: where the binding's messages go.
protocol BindingOutput: AnyObject {
    /// Writes `text` to standard output (`help()`).
    func writeOutput(_ text: String)
    /// Writes a line to standard error.
    func writeError(_ line: String)
    /// Writes `crescent: warning: message` to standard error.
    func warn(_ message: String)
    /// Writes `crescent: warning: FILE:LINE: message`, at the line of the Lua code calling.
    func warnAtCaller(_ message: String, _ stack: LuaStack)
    /// The line ``warnAtCaller(_:_:)`` writes, for a warning written later.
    func warningAtCaller(_ message: String, _ stack: LuaStack) -> String
    /// Prints an error from a handler (a completion), marks the run failed and, with
    /// `--fail-fast`, stops it.
    func reportHandlerError(_ error: LuaError, in context: String)
}

/// The loop: its turns, the gate work from other threads passes, and the tasks that run in it.
protocol BindingLoop: AnyObject {
    /// The loop that owns the VM.
    var loop: any EventLoop { get }
    /// What every hop from another thread passes (``BindingLink``).
    var gate: LoopGate { get }
    /// True while the host can still run code.
    var isRunning: Bool { get }
    /// Runs `job` on the loop as one turn of its own, later, unless the host has finished by then.
    func enqueue(_ job: @escaping () -> Void)
    /// Runs `job` inside the current turn when one is running, else as a turn of its own; nothing
    /// once the host has finished.
    func runTurn(_ job: () -> Void)
    /// Resumes `task` with `arguments` values on its coroutine's stack.
    func resume(_ task: LuaTask, arguments: Int32)
    /// The Lua function `task(fn, ...)`; with `contextFirst`, `task(context, fn, ...)`.
    func taskFunction(ownsSpawns: Bool, contextFirst: Bool) -> LuaFunctionBody
}

/// Plugins: services whose plugin is still to start, and why a service is not there.
protocol BindingPlugins: AnyObject {
    /// The start of the plugin that provides `service`, while it has not started.
    func pendingStart(of service: String) -> (any PendingServiceStart)?
    /// Why no service `name` is there when a plugin explains it (the script's VM is a plugin's
    /// that does not require it, or its plugin was skipped), else nil.
    func missingServiceNote(for name: String) -> String?
    /// True for a service that lives in another VM (a plugin's): values sent to it must have a
    /// model form (no metatables).
    func isPluginService(_ object: any ModelObject) -> Bool
}

/// A plugin's start that touching one of its services waits for.
protocol PendingServiceStart: AnyObject, Sendable {
    /// Starts it for a touch outside a task: false when it did not answer soon (it goes on
    /// starting in the background).
    func startForTouch() -> Bool
    /// Starts it in the background; `whenDone` runs on the loop once it has started or failed.
    func startInBackground(whenDone: @escaping @Sendable () -> Void)
    /// What a touch of `service` outside a task is answered while it starts.
    func stillStartingNote(touching service: String) -> String
}
