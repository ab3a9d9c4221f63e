import Model
import Services
import Testing

@Test func standardServiceNamesAreUnique() throws {
    let services = try StandardServices.make(PluginContext(dataDirectory: ":memory:"))
    let names = services.map(\.interface.name)
    #expect(Set(names).count == names.count)
}
