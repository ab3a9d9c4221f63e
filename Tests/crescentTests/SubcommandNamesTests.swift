import ArgumentParser
@testable import crescent
import Testing

/// The subcommand names the command line checks before parsing (a script's file name cannot
/// shadow them) are written out for speed; they must stay those of the configurations.
@Suite struct SubcommandNamesTests {
    @Test func theWrittenOutNamesAreTheConfigurations() {
        let configured = Crescent.configuration.subcommands.compactMap { $0.configuration.commandName } + ["help"]
        #expect(Crescent.subcommandNames.sorted() == configured.sorted())
    }
}
