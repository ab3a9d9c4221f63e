import LuaBridge
import Testing

/// The collector restarted after a pause (``LuaVM/resumeCollector()``): what was built meanwhile
/// counts as live, as after a completed cycle, so no cycle starts until the heap has grown by its
/// size (by a quarter of the room left under a memory limit, when that is less), and one does
/// after that.
@Suite struct LuaCollectorTests {
    /// A VM holding about 2 MiB of live tables built with the collector stopped, then restarted,
    /// and a global `collected` that a finalizer sets once a cycle has run.
    private func vmAfterPausedBuild(memoryLimit: Int? = nil) throws -> LuaVM {
        let vm = try LuaVM(memoryLimit: memoryLimit)
        try vm.withCollectorPaused { () throws(LuaError) in
            try vm.run("keep = {} for i = 1, 20000 do keep[i] = { i } end")
        }
        try vm.run("collected = false setmetatable({}, { __gc = function() collected = true end })")
        return vm
    }

    /// Makes `count` empty tables of garbage (about 56 bytes each) and says whether a cycle ran.
    private func collected(after count: Int, in vm: LuaVM) throws -> LuaValue {
        try evaluateOne(vm, "for i = 1, \(count) do local t = {} end return collected")
    }

    @Test func noCycleRunsBeforeTheHeapHasGrownByWhatWasBuilt() throws {
        // About a twentieth of the heap in garbage: a collector restarted with no credit ran a
        // whole cycle meanwhile (marking the 20,000 live tables) and called the finalizer.
        #expect(try collected(after: 2_000, in: vmAfterPausedBuild()) == false)
        // Half the heap: still within the credit.
        #expect(try collected(after: 20_000, in: vmAfterPausedBuild()) == false)
    }

    @Test func aCycleRunsOnceTheHeapHasGrownPastIt() throws {
        let vm = try vmAfterPausedBuild()
        #expect(try collected(after: 100_000, in: vm) == true)
        #expect(try evaluateOne(vm, "return collectgarbage('isrunning')") == true)
    }

    @Test func underAMemoryLimitTheCreditIsAQuarterOfTheRoomLeft() throws {
        // About 2 MiB left under the limit: a credit of about 0.5 MiB, so half the heap in garbage
        // (which the credit without a limit covers) sees a cycle through.
        #expect(try collected(after: 20_000, in: vmAfterPausedBuild(memoryLimit: 4 << 20)) == true)
    }
}
