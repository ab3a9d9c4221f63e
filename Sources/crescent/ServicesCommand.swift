import ArgumentParser
import CrescentKit
import Model

/// `crescent services [NAME]`: the services, their properties, methods, events and docs.
struct ServicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "services",
        abstract: "List the services, or document one: properties, methods (signature and doc) and events."
    )

    @OptionGroup var common: SetupOptions

    @Argument(help: ArgumentHelp("The service to document.", valueName: "name"))
    var name: String?

    func run() throws {
        let options = common.hostOptions()
        let services: [ServiceEntry]
        do throws(HostSetupError) {
            services = try ServiceFactory.entries(plugins: [.standard], options: options)
        } catch {
            Crescent.usageError(error.description)
        }
        // A plugin folder's service is known by name until its plugin first starts (then its
        // declarations are recorded): start it to document it.
        let known = services.first { $0.name == name }.map { !$0.interface.properties.isEmpty || !$0.interface.methods.isEmpty || !$0.interface.events.isEmpty }
        if let name, known != true, let outcome = PluginCatalog.documentation(ofPluginService: name, plugins: [.standard], options: options) {
            ProcessIO.writeOut(outcome.text + "\n")
            // A plugin that could not start documents nothing: the command failed.
            if !outcome.ok { throw ExitCode(1) }
            return
        }
        switch ServiceCatalog.documentation(of: services, name: name) {
        case .success(let text): ProcessIO.writeOut(text + "\n")
        case .failure(let error): Crescent.usageError(error.description)
        }
    }
}
