import ArgumentParser
import CrescentKit

/// One option every way of running Crescent shares, declared once: its long name, whether the
/// next word is its value, and how that value sets ``CommonSettings``.
///
/// ArgumentParser's declaration (``CommonOptions``) takes each name from here, and the command
/// lines read without the parser (``Crescent/quickRun(_:)``, ``Crescent/hoistingSubcommand(_:)``,
/// ``Crescent/bareListen(_:)``) read only this table; a test checks that the parser declares
/// exactly these options, each taking a value or not as the table says.
struct CommonOption: Sendable {
    /// The long name, without its dashes (`data-dir`).
    let name: String
    /// True when the next word is the value (`--data-dir DIR`). `--listen` takes its value only
    /// as `--listen=NAME` on these command lines (a bare one becomes the default name first).
    let takesValue: Bool
    /// Sets the value given (the next word, for an option that takes one; for `--listen`, the
    /// part after `=`). False when it is missing or does not convert as ArgumentParser would
    /// convert it: the parser then reads the whole line and says what is wrong.
    let apply: @Sendable (inout CommonSettings, String?) -> Bool

    /// `--data-dir`.
    var spelling: String { "--" + name }
    /// The name as ArgumentParser's `@Option` and `@Flag` take it.
    var argumentName: NameSpecification { .customLong(name) }

    static let ui = valued("ui") { settings, value in
        guard let mode = HostOptions.UIMode(argument: value) else { return false }
        settings.ui = mode
        return true
    }
    static let failFast = flag("fail-fast") { $0.failFast = true }
    static let timeout = valued("timeout") { settings, value in
        guard let seconds = Double(argument: value) else { return false }
        settings.timeout = seconds
        return true
    }
    static let memoryLimit = valued("memory-limit") { settings, value in
        guard let limit = Int(argument: value) else { return false }
        settings.memoryLimit = limit
        return true
    }
    static let config = valued("config") { settings, value in
        settings.config = value
        return true
    }
    static let dataDir = valued("data-dir") { settings, value in
        settings.dataDir = value
        return true
    }
    static let location = valued("location") { settings, value in
        settings.location = value
        return true
    }
    static let noColor = flag("no-color") { $0.noColor = true }
    static let keepRunning = flag("keep-running") { $0.keepRunning = true }
    static let logLevel = valued("log-level") { settings, value in
        guard let level = HostOptions.LogLevel(argument: value) else { return false }
        settings.logLevel = level
        return true
    }
    static let listen = CommonOption(name: "listen", takesValue: false) { settings, value in
        guard let value else { return false }
        settings.listen = value
        return true
    }
    static let plugin = valued("plugin") { settings, value in
        settings.plugins.append(value)
        return true
    }
    static let noPlugins = flag("no-plugins") { $0.noPlugins = true }

    /// Every common option, in the order the help shows them.
    static let all: [CommonOption] = [ui, failFast, timeout, memoryLimit, noColor, keepRunning, listen,
                                      config, dataDir, location, logLevel, plugin, noPlugins]

    /// The option `word` spells (`--data-dir`; `--listen=NAME` spells `listen`), if any.
    static func spelled(_ word: String) -> CommonOption? {
        if word.hasPrefix(listen.spelling + "=") { return listen }
        return all.first { $0.spelling == word }
    }

    /// True when `word` is an option whose value is the next word.
    static func takesValue(_ word: String) -> Bool {
        spelled(word)?.takesValue ?? false
    }

    /// An option whose value is the next word.
    private static func valued(_ name: String, _ apply: @escaping @Sendable (inout CommonSettings, String) -> Bool) -> CommonOption {
        CommonOption(name: name, takesValue: true) { settings, value in
            guard let value else { return false }
            return apply(&settings, value)
        }
    }

    /// An option that takes no value.
    private static func flag(_ name: String, _ apply: @escaping @Sendable (inout CommonSettings) -> Void) -> CommonOption {
        CommonOption(name: name, takesValue: false) { settings, _ in
            apply(&settings)
            return true
        }
    }
}
