import Model
import Services
import Testing

@Test func standardServiceNamesAreUnique() throws {
    let services = try StandardServices.make(PluginContext(dataDirectory: ":memory:"))
    let names = services.map(\.interface.name)
    #expect(Set(names).count == names.count)
}

/// Each entry names its service before building its declaration (a run that never touches a
/// service never builds it): that name must be the declaration's and the service's own, for
/// the entries that make a service and for those that failed on a bad setting.
@Test(arguments: [false, true])
func standardEntriesNameTheirDeclarations(failing: Bool) throws {
    // Bad settings fail location, http and the store (which fails session and feeds with it).
    let sections: Fields = failing
        ? ["location": .object(["provider": .integer(1)]), "store": .object(["url": .integer(1)]),
           "http": .object(["timeout": .string("soon")])]
        : [:]
    let entries = StandardServices.entries(PluginContext(sections: sections, dataDirectory: ":memory:"))
    #expect(entries.map(\.name) == ["location", "geocoder", "store", "session", "feeds", "http", "process", "files"])
    for entry in entries {
        #expect(entry.interface.name == entry.name)
        if failing {
            // The geocoder, process and files read no settings.
            #expect((entry.setupError != nil) == !["geocoder", "process", "files"].contains(entry.name), "\(entry.name): \(String(describing: entry.setupError))")
        } else {
            #expect(entry.setupError == nil)
            #expect(try entry.service().interface.name == entry.name)
        }
    }
}
