import Crypto
import Model
import Services
#if canImport(Glibc)
import Glibc
#endif

extension PluginSandbox {
    /// The data folder of `manifest`'s plugin, `DATA/plugin-data/NAME` (made when missing),
    /// absolute.
    ///
    /// Not `DATA/plugins/NAME`, which the contract named: with the default data folder that is
    /// where `crescent plugins install` puts plugin NAME and where every run looks for plugins,
    /// so a plugin asking for nothing could write a plugin there, installed for every folder,
    /// even one named as a plugin the user granted (which then ran with that grant), and an
    /// update wiped an installed plugin's data. A data folder left at the old place by an
    /// earlier release is moved over once, unless it is an installed plugin's own folder.
    ///
    /// The folder belongs to the plugin folder that used it first (`DATA/plugin-data/NAME.owner`
    /// records it, beside the folder, where the plugin cannot write): a plugin of the same name
    /// from another folder (a cloned project's `plugins/NAME` shadowing an installed, granted
    /// plugin) gets `DATA/plugin-data/NAME-HASH` of its own instead of reading and rewriting the
    /// other's data. An installed plugin keeps its folder across
    /// updates, and so its data. A data folder with no record (made before records were kept, or
    /// by hand) is the installed plugin's (`DATA/plugins/NAME`) when one is installed: another
    /// folder's plugin of that name does not take it by running first.
    ///
    /// `plugin-data` and the plugin's folder in it are opened from a descriptor of the data
    /// folder without following links, and must be folders of the user's that no one else may
    /// write: the data folder may be one someone else made (a cloned project's `data/`, a shared
    /// `--data-dir /tmp/...`), and a link planted there gave a plugin asking nothing whatever it
    /// led to (`~/.ssh`, `~/bin`) as the folder it may write.
    ///
    /// - Throws: ``PluginProblem`` naming the path that is a link, not a folder or not the
    ///   user's, and the fix.
    static func dataFolder(of manifest: PluginManifest, dataDirectory: String?) throws(PluginProblem) -> String {
        let name = manifest.name
        let base = PluginGrants.dataFolder(dataDirectory)
        let earlier = base + "/plugins/" + name
        var status = stat()
        if lstat(base + "/plugin-data/" + name, &status) != 0, errno == ENOENT,
           lstat(earlier, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR, access(earlier + "/plugin.toml", F_OK) != 0 {
            Folders.make(base + "/plugin-data", mode: 0o700)
            _ = Glibc.rename(earlier, base + "/plugin-data/" + name)
        }
        Folders.make(base, mode: 0o700)
        // The data folder itself is the user's choice (a link to it is theirs to make).
        let top = Glibc.open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard top >= 0 else {
            throw PluginProblem("plugin '\(name)': cannot open the data folder \(base) for its data: \(String(cString: strerror(errno)))")
        }
        defer { close(top) }
        let parent = try ownFolder(named: "plugin-data", in: top, shown: base + "/plugin-data", plugin: name)
        defer { close(parent) }
        var leaf = name
        let owner = resolve(manifest.folder)
        let installed = base + "/plugins/" + name
        let claims = owner == resolve(installed) || !Self.hasUnrecordedData(leaf, in: parent) || access(installed + "/plugin.toml", F_OK) != 0
        if !claims || Self.owner(recordedAt: leaf + ".owner", in: parent, claimingFor: owner).map({ $0 != owner }) == true {
            let digits = Array("0123456789abcdef")
            let digest = SHA256.hash(data: Array(owner.utf8)).prefix(6).map { String([digits[Int($0 >> 4)], digits[Int($0 & 15)]]) }.joined()
            leaf += "-" + digest
        }
        close(try ownFolder(named: leaf, in: parent, shown: base + "/plugin-data/" + leaf, plugin: name))
        // Absolute: a process plugin runs in its own folder, where a relative `--data-dir data`
        // named no folder at all. Neither component below the data folder is a link (checked
        // above), so this is the folder opened.
        return resolve(base) + "/plugin-data/" + leaf
    }

    /// The plugin folder that owns `manifest`'s data folder (recorded at its first run; the
    /// installed plugin's folder for data with no record when one is installed), nil when none
    /// ran yet. Read only: nothing is made.
    static func dataFolderOwner(of manifest: PluginManifest, dataDirectory: String?) -> String? {
        let base = PluginGrants.dataFolder(dataDirectory)
        let data = base + "/plugin-data/" + manifest.name
        guard let bytes = try? PluginFile.read(data + ".owner", limit: 1 << 16, what: "the data folder's owner record", followLinks: false) else {
            let installed = base + "/plugins/" + manifest.name
            var status = stat()
            let unrecorded = lstat(data + ".owner", &status) != 0 && errno == ENOENT
                && lstat(data, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
            return unrecorded && access(installed + "/plugin.toml", F_OK) == 0 ? resolve(installed) : nil
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether the folder open as `parent` holds the folder `leaf` without `leaf.owner`: data
    /// made before owners were recorded (a link there is no data: ``ownFolder`` names it).
    private static func hasUnrecordedData(_ leaf: String, in parent: Int32) -> Bool {
        var status = stat()
        guard fstatat(parent, leaf + ".owner", &status, AT_SYMLINK_NOFOLLOW) != 0, errno == ENOENT else { return false }
        return fstatat(parent, leaf, &status, AT_SYMLINK_NOFOLLOW) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
    }

    /// The folder `name` in the folder open as `parent`, made (mode 0700) when missing, opened
    /// without following a link. A link, anything but a folder, a folder of another user or one
    /// that others may write is refused.
    ///
    /// - Returns: its descriptor, which the caller closes.
    private static func ownFolder(named name: String, in parent: Int32, shown: String, plugin: String) throws(PluginProblem) -> Int32 {
        _ = mkdirat(parent, name, 0o700)
        let opened = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        let fix = "remove it, or run with a data folder only you control (--data-dir)"
        guard opened >= 0 else {
            let reason = errno
            var status = stat()
            if fstatat(parent, name, &status, AT_SYMLINK_NOFOLLOW) == 0, (status.st_mode & S_IFMT) == S_IFLNK {
                throw PluginProblem("plugin '\(plugin)': its data folder \(visible(shown, limit: 4096)) is a symbolic link: a plugin's data is never reached through a link, which would let it write wherever the link leads; \(fix)")
            }
            if reason == ENOTDIR {
                throw PluginProblem("plugin '\(plugin)': its data folder \(visible(shown, limit: 4096)) is not a folder; \(fix)")
            }
            throw PluginProblem("plugin '\(plugin)': cannot open its data folder \(visible(shown, limit: 4096)): \(String(cString: strerror(reason)))")
        }
        var status = stat()
        guard fstat(opened, &status) == 0 else {
            close(opened)
            throw PluginProblem("plugin '\(plugin)': cannot look at its data folder \(visible(shown, limit: 4096)): \(String(cString: strerror(errno)))")
        }
        if status.st_uid != geteuid() {
            close(opened)
            throw PluginProblem("plugin '\(plugin)': its data folder \(visible(shown, limit: 4096)) belongs to user \(status.st_uid), not you: whoever owns it can put links in it leading anywhere; \(fix)")
        }
        if status.st_mode & 0o022 != 0 {
            close(opened)
            throw PluginProblem("plugin '\(plugin)': its data folder \(visible(shown, limit: 4096)) can be written by others (mode \(String(status.st_mode & 0o777, radix: 8))), who could put links in it leading anywhere; run chmod go-w on it")
        }
        return opened
    }

    /// The plugin folder recorded in `record` (in the folder open as `parent`), which is made
    /// holding `owner` when there is none yet (`O_EXCL`: of two first starts at once, one claims
    /// it). Nil when it cannot be read.
    private static func owner(recordedAt record: String, in parent: Int32, claimingFor owner: String) -> String? {
        let made = openat(parent, record, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if made >= 0 {
            let bytes = Array(owner.utf8)
            let written = bytes.withUnsafeBytes { Glibc.write(made, $0.baseAddress, $0.count) }
            Glibc.close(made)
            if written == bytes.count { return owner }
        }
        let opened = openat(parent, record, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard opened >= 0 else { return nil }
        defer { close(opened) }
        var status = stat()
        guard fstat(opened, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG, status.st_size <= 1 << 16 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
        let count = bytes.withUnsafeMutableBytes { pread(opened, $0.baseAddress, $0.count, 0) }
        guard count >= 0 else { return nil }
        return String(decoding: bytes.prefix(count), as: UTF8.self)
    }
}
