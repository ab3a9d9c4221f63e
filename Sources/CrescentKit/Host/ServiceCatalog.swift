public import Model
import Services

/// The services' documentation without running any Lua or starting any service: what
/// `crescent services [NAME]` prints. It comes from the same declarations as `help()` in Lua.
public enum ServiceCatalog {
    /// An overview of every service, or the full reference of the one named `name`.
    public static func documentation(of services: [ServiceEntry], name: String?) -> Result<String, HostSetupError> {
        if let name {
            // The objects services hand out (`collection`), which errors and the README name.
            if !services.contains(where: { $0.name == name }), let object = ObjectInterfaces.standard.first(where: { $0.name == name }) {
                return .success(object.documentation(as: name))
            }
            guard let service = services.first(where: { $0.name == name }) else {
                // The object types are documented here too, so a near miss of one is suggested.
                let known = services.map(\.name)
                let objects = ObjectInterfaces.standard.map(\.name).filter { !known.contains($0) }
                let meant = NameSuggestion.closest(to: name, among: known + objects)
                let listing = NameSuggestion.listing("services", known, suggesting: nil)
                let suggestion = meant.map { "; did you mean '\($0)'?" } ?? ""
                return .failure(HostSetupError(description: "no service or object type named '\(name)' (\(listing); object types: "
                    + objects.joined(separator: ", ") + suggestion + ")"))
            }
            return .success(service.interface.documentation(as: "services.\(name)"))
        }
        guard !services.isEmpty else { return .success("No services are registered.") }
        let width = services.map(\.name.count).max() ?? 0
        var lines = ["Services (crescent services NAME for details):"]
        for service in services { lines.append("  " + service.interface.summaryLine(width: width)) }
        return .success(lines.joined(separator: "\n"))
    }
}
