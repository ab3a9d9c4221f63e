import Model

/// Reads a file of a plugin (its manifest, its `main`) that may be anything the plugin's author
/// or a link put there: only a regular file no larger than a stated limit is read, so a FIFO,
/// `/dev/zero` or a huge file breaks that one plugin instead of hanging or filling the host.
enum PluginFile {
    /// The most a `plugin.toml` may hold.
    static let manifestLimit = 1 << 20
    /// The most a Lua plugin's `main` file may hold.
    static let sourceLimit = 16 << 20

    /// The TOML file at `path` (at most ``manifestLimit`` bytes) as its tables and keys. With
    /// `followLinks` false (a plugin's manifest) a symbolic link is refused, not followed: a
    /// manifest that is a link to a file of the user's would make the host read that file and
    /// show part of it in the syntax error.
    ///
    /// - Throws: ``PluginProblem`` naming `path` and the line that is wrong.
    static func tables(_ path: String, what: String, followLinks: Bool = true) throws(PluginProblem) -> Fields {
        let bytes = try read(path, limit: manifestLimit, what: what, followLinks: followLinks)
        do throws(HostSetupError) {
            return try ConfigFile.parse(bytes: bytes, name: path).sections
        } catch {
            throw PluginProblem(error.description)
        }
    }

    /// The bytes of the regular file at `path`, at most `limit` of them.
    ///
    /// - Throws: ``PluginProblem`` naming `path` and why it was not read as `what` ("the plugin's
    ///   manifest", "the grants file").
    static func read(_ path: String, limit: Int, what: String, followLinks: Bool = true) throws(PluginProblem) -> [UInt8] {
        do throws(RegularFile.Refusal) {
            return try RegularFile.read(path, limit: limit, followLinks: followLinks)
        } catch .tooLarge(let limit) {
            throw problem(path, what, "it is larger than \(limit >> 20) MiB, the most \(what) may hold")
        } catch {
            throw problem(path, what, error.reason)
        }
    }

    private static func problem(_ path: String, _ what: String, _ reason: String) -> PluginProblem {
        PluginProblem("\(path): cannot use it as \(what): \(reason)")
    }
}
