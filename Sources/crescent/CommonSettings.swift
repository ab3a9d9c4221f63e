import ArgumentParser
import CrescentKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The values of the options every way of running Crescent shares (``CommonOptions``), as plain
/// data: read by ArgumentParser, or by ``Crescent/quickRun(_:)`` for the common command lines it
/// understands. Both turn them into host options and check them here, in one place.
struct CommonSettings {
    var ui: HostOptions.UIMode?
    var failFast = false
    var timeout: Double?
    var memoryLimit = HostOptions().memoryLimitMiB
    var config: String?
    var dataDir: String?
    var location: String?
    var noColor = false
    var keepRunning = false
    var logLevel = HostOptions().logLevel
    var listen: String?
    var plugins: [String] = []
    var noPlugins = false

    /// What is wrong with a `--memory-limit` (of a run or of `crescent test`); nil when nothing is.
    static func memoryLimitProblem(_ mebibytes: Int) -> String? {
        mebibytes < 0 ? "--memory-limit must be 0 (no limit) or a number of MiB, got \(mebibytes)" : nil
    }

    /// What is wrong with the values, as the usage error says it; nil when nothing is.
    var problem: String? {
        if let timeout, !(timeout > 0 && timeout.isFinite) {
            let shown = timeout == timeout.rounded() && abs(timeout) < 1e15 ? String(Int64(timeout)) : String(timeout)
            return "--timeout must be a positive number of seconds, got \(shown)"
        }
        if let problem = Self.memoryLimitProblem(memoryLimit) { return problem }
        if dataDir == "" { return "--data-dir must name a folder, got an empty string" }
        if let dataDir, let problem = Self.dataDirProblem(dataDir) { return problem }
        if config == "" { return "--config must name a file, got an empty string" }
        if location == "" { return "--location must name a provider (gpsd, nmea:FILE, gpx:FILE, fixed:LAT,LON), got an empty string" }
        if let location, let problem = HostOptions.locationProblem(location) {
            return "--location \(location)" + (location.hasSuffix(":") ? " " : ": ") + problem  // `gpx: needs a file`
        }
        // --no-plugins keeps only the builtins, so the folder given would be dropped without a word.
        if noPlugins, let folder = plugins.first {
            return "--no-plugins keeps only the builtin services, so --plugin \(folder) would not load: give one of the two"
        }
        return nil
    }

    /// `crescent --data-dir app.lua`: the option took the script's name as its folder, and the run
    /// read its script from stdin, so a cron job ran nothing and exited 0. A `.lua` name that is
    /// no folder is refused before anything runs. Another unusable data folder (a file, say)
    /// fails only what uses it: services start on first use, and a script that needs none runs.
    static func dataDirProblem(_ path: String) -> String? {
        guard path.hasSuffix(".lua") else { return nil }
        var status = stat()
        let exists = stat(path, &status) == 0
        if exists, status.st_mode & S_IFMT == S_IFDIR { return nil }
        let what = exists ? "a file" : "a Lua script's name"
        return "--data-dir takes a folder, got \(path), which is \(what): give the folder before the script (crescent --data-dir DIR SCRIPT.lua)"
            + ", or leave --data-dir out to use the default one"
    }

    /// The host options these values describe, for a script with `arguments`.
    func hostOptions(arguments: [String]) -> HostOptions {
        var options = CommonOptions.defaultHostOptions(arguments: arguments)
        options.memoryLimitMiB = memoryLimit
        options.timeout = timeout
        options.failFast = failFast
        options.logLevel = logLevel
        if let ui { options.ui = ui }
        if noColor { options.colors = false }
        options.configPath = config
        options.dataDirectory = dataDir
        options.location = location
        options.keepsRunningAfterInput = keepRunning
        options.listen = listen == CommonOptions.defaultListenName ? "" : listen
        options.pluginSearch = PluginSearch(folders: plugins, disabled: noPlugins)
        return options
    }

    /// Sets the option `word` (`--data-dir`, `--fail-fast`, `--listen=NAME`, …) from `value`, the
    /// next word, for an option that takes one (``CommonOption``). False when this is not an
    /// option it knows, or its value does not convert as ArgumentParser would convert it: the
    /// parser then reads the whole command line and says what is wrong.
    mutating func set(_ word: String, value: String?) -> Bool {
        guard let option = CommonOption.spelled(word) else { return false }
        if option.name == CommonOption.listen.name {
            guard word.hasPrefix(option.spelling + "=") else { return false }
            return option.apply(&self, String(word.dropFirst(option.spelling.count + 1)))
        }
        return option.apply(&self, value)
    }
}
