// The conformances are public because the types are; these imports say so.
public import ArgumentParser
public import CrescentKit

/// `--ui live|plain|json`: the parser validates the value and lists the choices.
extension HostOptions.UIMode: ExpressibleByArgument {}

/// `--log-level debug|info|warn|error`.
extension HostOptions.LogLevel: ExpressibleByArgument {
    public init?(argument: String) { self.init(name: argument) }
    public var defaultValueDescription: String { name }
    public static var allValueStrings: [String] { allCases.map(\.name) }
}
