import Model
import Testing

@Test func codesRoundTripThroughTheirLuaSpelling() {
    let names = ServiceError.Code.all.map(\.name)
    #expect(names == ["invalid_argument", "invalid_data", "not_found", "timeout", "cancelled",
                      "unavailable", "io", "network", "permission", "conflict", "internal"])
    for code in ServiceError.Code.all { #expect(ServiceError.Code(name: code.name) == code) }
    #expect(ServiceError.Code(name: "nope") == nil)
}

@Test func descriptionReadsLikeTheContract() {
    let error = ServiceError(.invalidArgument, "latitude 123 is outside [-90, 90]", service: "geocoder", method: "reverse")
    #expect(error.description == "geocoder.reverse: invalid_argument: latitude 123 is outside [-90, 90]")
    #expect(ServiceError(.timeout, "too slow").description == "timeout: too slow")
}
