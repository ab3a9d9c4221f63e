import CLua
import LuaBridge

/// Helpers shared by the in-process rows: a VM configured like the host's and chunk loading.
enum BenchVM {
    /// The host's default allocation limit (`--memory-limit 1024`), so the allocator does the same
    /// bookkeeping as in `crescent`. The measured loops do not allocate.
    static let memoryLimit = 1024 << 20

    /// A fresh VM, or a failure naming `row`.
    static func make(row: String) throws(BenchFailure) -> LuaVM {
        do {
            return try LuaVM(memoryLimit: memoryLimit)
        } catch {
            throw BenchFailure(row: row, reason: "cannot create a Lua state: \(error.message)")
        }
    }

    /// Runs `source` and pins its one result in the registry.
    static func evaluate(_ source: String, in vm: LuaVM, row: String) throws(BenchFailure) -> LuaRef {
        do {
            try vm.load(Array(source.utf8), name: "=\(row)")
            try vm.call(arguments: 0, results: 1)
        } catch {
            throw BenchFailure(row: row, reason: error.message)
        }
        return vm.ref()
    }
}

/// A slot filled right after a value that must refer to it is created: exported method bodies are
/// passed to `objectType` before the `LuaObjectType` they check against exists.
final class LateBound<Value> {
    var value: Value?
}
