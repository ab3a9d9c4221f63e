@testable import CrescentKit
import LuaBridge
import Model
import Testing

/// The phases of a task, of a service request and of a run are enums: these walk each legal
/// transition and check that every illegal one is refused without changing anything.
@Suite struct StateTransitionTests {
    /// A task over a coroutine of a fresh VM (the VM is returned so it outlives the task).
    private func makeTask() throws -> (LuaVM, LuaTask) {
        let vm = try LuaVM()
        try vm.load(Array("return 1".utf8), name: "=task")
        return (vm, LuaTask(coroutine: LuaCoroutine(vm: vm)))
    }

    @Test func aTaskThatArrangesItsResumeWaitsForItAndABareYieldWaitsForTheNextTurn() throws {
        let (vm, task) = try makeTask()
        #expect(task.state == .suspended)
        #expect(task.begin())
        #expect(task.state == .running)
        // Running already: a second resume is refused.
        #expect(!task.begin())
        task.arrangedResume()
        #expect(task.state == .runningWithResumeArranged)
        #expect(task.yielded() == .wait)
        #expect(task.state == .waiting)
        // Not running: a cancel cannot wait for a yield, the caller ends it at once.
        #expect(!task.requestCancel())
        #expect(task.state == .waiting)
        #expect(task.begin())
        #expect(task.yielded() == .resumeNextTurn)
        #expect(task.state == .waiting)
        task.invalidate()
        vm.close()
    }

    @Test func aCancelWhileItsCodeRunsWinsOverAResumeItArranged() throws {
        let (vm, task) = try makeTask()
        #expect(task.begin())
        task.arrangedResume()
        #expect(task.requestCancel())
        #expect(task.state == .cancelling)
        // A sleep after the cancel does not undo it.
        task.arrangedResume()
        #expect(task.state == .cancelling)
        #expect(task.yielded() == .finishCancelled)
        task.invalidate()
        vm.close()
    }

    @Test func aDoneTaskIsNeverResumedOrCancelledAgain() throws {
        let (vm, task) = try makeTask()
        #expect(task.begin())
        task.invalidate()
        #expect(task.state == .done)
        #expect(task.isDone)
        #expect(!task.begin())
        #expect(!task.requestCancel())
        task.arrangedResume()
        #expect(task.yielded() == .nothing)
        #expect(task.state == .done)
        vm.close()
    }

    @Test func aRequestDeliversOneOutcomeAndACancelMayReplaceItUntilThen() throws {
        let test = try TestHost()
        let request = ServiceRequest(service: "bench", method: "work", owner: nil, binding: test.host.binding)
        #expect(!request.isDone)
        #expect(request.resolve(.success(.integer(1))))
        // A second answer is ignored; its delivery is queued already.
        #expect(!request.resolve(.success(.integer(2))))
        guard case .resolved(.success(.integer(1))) = request.state else {
            Issue.record("expected the first outcome, got \(request.state)")
            return
        }
        // A user's cancel replaces it (and needs no second delivery).
        #expect(!request.resolve(.failure(ServiceError(.cancelled, "cancelled")), replacing: true))
        guard case .resolved(.failure) = request.state else {
            Issue.record("expected the cancel to replace the outcome, got \(request.state)")
            return
        }
        request.finish()
        #expect(request.isDone)
        #expect(!request.resolve(.success(.integer(3)), replacing: true))
        #expect(request.isDone)
        // Finished, the host lets go of its VM's functions, which hold it.
        test.host.finish(status: 0)
    }

    @Test func aRunGoesFromItsMainChunkToItsWorkToItsEnd() throws {
        let test = try TestHost()
        #expect(test.host.runState == .runningMain)
        test.run("timer.after(1, function() app.exit(3) end)")
        #expect(test.host.runState == .mainFinished)
        #expect(test.host.isRunning)
        test.advance(seconds: 1)
        #expect(test.host.runState == .finished(status: 3))
        #expect(test.host.exitStatus == 3)
        // Finished: a later request changes nothing.
        test.host.requestExit(5)
        #expect(test.host.runState == .finished(status: 3))
    }

    @Test func theFirstExitRequestWins() throws {
        let test = try TestHost()
        test.host.runTurn { host in
            host.requestExit(2)
            host.requestExit(4)
            #expect(host.runState == .exitRequested(status: 2))
            #expect(host.requestedExit == 2)
        }
        #expect(test.host.runState == .finished(status: 2))
        #expect(test.exitStatus == 2)
    }

    /// A task holds its host and scopes through their links (``Model/WeakLink``): once the host
    /// has finished, the task reads it gone; once the test has let go of everything, reading its
    /// scopes reaches a live scope or nil, never a freed object (under `make sanitize`, and the
    /// links' debug check).
    @Test func aTaskOutlivingItsHostReadsItGone() throws {
        var test: TestHost? = try TestHost()
        test?.run("task(function() sleep(10) end)")
        let task = test?.host.tasks.first
        #expect(task?.host === test?.host)
        #expect(task?.owner != nil)
        test?.host.finish(status: 0)
        #expect(task?.isDone == true)
        #expect(task?.host == nil)
        test = nil
        #expect(task?.host == nil)
        #expect(task?.owner?.isEnded ?? true)
        #expect(task?.scope?.isEnded ?? true)
    }
}
