import Model
import Glibc

extension ProcessService: DeclaredService {
    static let serviceName = "process"

    /// `{ "git", "pull" }`, or with `shell = true` one command line.
    private static let argvArgument = ArgumentSpec(
        "argv", .oneOf([.array(of: .string), .string]),
        "The program and its arguments, { \"git\", \"pull\" } (the program is looked up in PATH unless it holds a /); with shell = true, one command line for /bin/sh -c.")
    private static let optionsArgument = ArgumentSpec(
        "options", .table,
        "{ cwd = folder, env = { NAME = \"value\" or false }, stdin = string, timeout = seconds (then SIGTERM, and SIGKILL 2 s later), maxBytes = n per stream (default 10 MiB), shell = true, outliveTask = true (spawn: keep running after the task that spawned it ends) }.",
        optional: true, options: ProcessSpec.options)

    static let declaration: AnyInterface = Interface<ProcessService>(
        name: serviceName,
        summary: "Programs run without blocking the loop: run to completion, or spawn and talk to them; each in its own process group, killed with its owner."
    ) { d in
        d.method(
            "run", [argvArgument, optionsArgument],
            returns: "a processResult { status (nil when a signal ended it), signal (\"SIGTERM\", or nil), stdout, stderr, truncated, timedOut }",
            "Runs a program to its end and answers how it ended and what it wrote; an exit status other than 0 is a result, not an error."
        ) { service, arguments, reply in
            do throws(ServiceError) {
                let spec = try ProcessSpec(argv: arguments[0], options: arguments[1])
                guard !spec.outliveTask else {
                    throw ServiceError(.invalidArgument, "options.outliveTask is for spawn: a run awaited in a task ends with it, and one given a completion belongs to the task's owner")
                }
                let stop = try service.start(spec) { result in reply(result.map(\.value)) }
                reply.onCancel(stop)
            } catch {
                reply(.failure(error))
            }
        }
        d.function(
            "spawn", [argvArgument, optionsArgument],
            returns: "a childProcess { pid, running, write, closeInput, kill, wait; events didOutput, didExit }",
            "Starts a program and hands it back at once: its output comes line by line as didOutput events, its end as didExit; it is killed when its owner ends and, spawned inside task(fn), when that task ends (unless outliveTask = true)."
        ) { service, arguments throws(ServiceError) in
            .handle(ObjectHandle(try service.spawn(try ProcessSpec(argv: arguments[0], options: arguments[1]))))
        }
    }.erased
}

extension SpawnedProcess {
    static let declaration: AnyInterface = Interface<SpawnedProcess>(
        name: "childProcess",
        summary: "A program started by process:spawn: its output as events, its stdin to write to, its end."
    ) { d in
        d.property("pid", type: "integer", "The program's process id (also its process group's); nil when its start failed (wait() says why).") {
            $0.launchedPid.map { .integer(Int64($0)) } ?? .null
        }
        d.property("running", type: "boolean", "True until the program has exited (didExit comes with the change).") { .bool($0.isRunning) }
        d.action("write", [.init("data", .string, "Bytes for its stdin.")],
                 "Writes to the program's stdin (queued: it never blocks the loop).") { process, arguments throws(ServiceError) in
            switch arguments[0] {
            case .string(let text): try process.write(Array(text.utf8))
            case .bytes(let bytes): try process.write(bytes)
            default: throw ServiceError(.invalidArgument, "data must be a string")
            }
        }
        d.action("closeInput", [], "Closes the program's stdin once what was written has gone (it then reads end-of-file).") { process, _ throws(ServiceError) in
            process.closeInput()
        }
        d.action("kill", [.init("signal", .oneOf([.string, .integer]), "\"SIGTERM\" (the default), \"SIGINT\", \"SIGKILL\", … or a number.", optional: true)],
                 "Sends a signal to the program's whole process group (nothing once it has exited).") { process, arguments throws(ServiceError) in
            process.kill(signal: arguments[0].isNull ? Glibc.SIGTERM : try ProcessOutcome.signalNumber(arguments[0]))
        }
        d.method("wait", [], returns: "{ status, signal, timedOut }",
                 "Waits for the program to exit (at once when it has).", replying: { process, _, reply in process.wait(reply) })
        d.event("didOutput", payload: "{ stream = \"stdout\" or \"stderr\", line, truncated (a line cut at maxBytes) }",
                "A line the program wrote, without its newline (a last line without one counts too).")
        d.event("didExit", payload: "{ status (nil when a signal ended it), signal, timedOut, error (when it could not start) }",
                "The program has exited (its output has all been delivered), or could not start: a missing #! interpreter, a file that is no program.")
    }.erased
}
