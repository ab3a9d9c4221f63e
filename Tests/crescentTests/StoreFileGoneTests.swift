import Foundation
import Testing

/// A store file removed or replaced while the host has it open: the host's later writes would go
/// to the old file, which no process can open again, so each fails, naming the file and the fix,
/// and none is acknowledged (issue 32, attack D5).
@Suite struct StoreFileGoneTests {
    /// How the file at the store's path goes away.
    enum Loss: String, CaseIterable, CustomStringConvertible {
        /// `rm` of the file and its log.
        case removed
        /// Another SQLite file renamed over it (a restore from a copy).
        case replaced
        /// `rm` of its write-ahead log only (harden4 H3): commits would go on into a log no
        /// process can read again.
        case logRemoved

        var description: String { rawValue }
    }

    /// A script that adds a record, loses the file, then adds one record on the loop and a batch
    /// of 100 (queued on the writer), printing each outcome; the next run counts what the file
    /// at the path holds.
    @Test(arguments: Loss.allCases)
    func writesAfterTheFileIsGoneFailAndNamingTheFile(_ loss: Loss) async throws {
        let sandbox = try Sandbox()
        let folder = sandbox.path + "/data"
        let file = folder + "/store.sqlite"
        if loss == .replaced {
            // A store file of its own, made by another run, to rename over the first.
            let other = try await crescent(["--data-dir", sandbox.path + "/other", "-e", """
                task(function() services.store:collection("v"):add({ other = true }) end)
                """], in: sandbox)
            try #require(other.status == 0, "\(other)")
        }
        let lose = switch loss {
        case .removed: "os.remove(file); os.remove(file .. '-wal'); os.remove(file .. '-shm')"
        case .replaced: "assert(os.rename(\(luaString(sandbox.path + "/other/store.sqlite")), file))"
        case .logRemoved: "assert(os.remove(file .. '-wal'))"
        }
        let result = try await crescent(["--data-dir", folder, "-e", """
            local file = \(luaString(file))
            local c = services.store:collection("v")
            task(function()
                local first, err = c:add({ i = 1 })
                print("before", first ~= nil, err)
                \(lose)
                local one, oneErr = c:add({ i = 2 })
                print("one", one, oneErr)
                local batch = {}
                for i = 1, 100 do batch[i] = { i = i } end
                local many, manyErr = c:add(batch)
                print("many", many, manyErr)
            end)
            """], in: sandbox)
        #expect(result.status == 0, "\(result)")
        let lines = result.stdoutLines
        #expect(lines.first == "before\ttrue\tnil", "\(result)")
        let what = switch loss {
        case .removed: "database \(file) was removed"
        case .replaced: "database \(file) was replaced by another file"
        case .logRemoved: "database's write-ahead log \(file)-wal was removed"
        }
        for (index, label) in ["one", "many"].enumerated() where lines.count > index + 1 {
            let line = lines[index + 1]
            #expect(line.hasPrefix("\(label)\tnil\tcollection.add: io: the store \(what) while this process had it open"),
                    "\(loss): \(result)")
            #expect(line.contains("restart crescent"), "the message says the fix: \(result)")
        }
        #expect(lines.count == 3, "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
        // Nothing acknowledged went missing: what the path holds now is what the runs said.
        let after = try await crescent(["--data-dir", folder, "-e", """
            print(services.store:collection("v").count)
            """], in: sandbox)
        // With the log gone, the first record survives only if the host's last connection
        // checkpointed it from the log it still had open when it ended.
        let expected = switch loss {
        case .removed: ["0\n"]
        case .replaced: ["1\n"]
        case .logRemoved: ["0\n", "1\n"]
        }
        #expect(expected.contains(after.stdout), "\(after)")
    }

    /// The check costs a write nothing visible: a store whose file stays in place takes its
    /// writes as before, and a second process's writes to the same file are seen.
    @Test func writesToAFileThatStaysArePersisted() async throws {
        let sandbox = try Sandbox()
        let folder = sandbox.path + "/data"
        let result = try await crescent(["--data-dir", folder, "-e", """
            local c = services.store:collection("v")
            task(function()
                for i = 1, 20 do assert(c:add({ i = i })) end
                local batch = {}
                for i = 1, 100 do batch[i] = { i = i } end
                assert(c:add(batch))
                print(c.count)
            end)
            """], in: sandbox)
        #expect(result.stdout == "120\n", "\(result)")
        let after = try await crescent(["--data-dir", folder, "-e", """
            print(services.store:collection("v").count)
            """], in: sandbox)
        #expect(after.stdout == "120\n", "\(after)")
    }
}
