import Model

extension LocationService: DeclaredService {
    static let serviceName = "location"

    static let declaration: AnyInterface = Interface<LocationService>(
        name: serviceName,
        summary: "The current position from gpsd, an NMEA file or device, a GPX track or a fixed point. "
            + "start([{ distance = m }]) and stop() are counted per owner."
    ) { d in
        d.property("location", type: "location or nil",
                   "The latest fix {lat, lon, altitude, speed (m/s), course (deg), accuracy (m), time (s since epoch), provider}.") {
            $0.location.value
        }
        d.property("updating", type: "boolean", "True while any owner has started the service.") { .bool($0.updating.value) }
        d.property("provider", type: "string", "The provider: gpsd, nmea, gpx or fixed.") { .string($0.providerName.value) }
        d.method("current", [], returns: "a location",
                 "The next fix, or the last one if it is fresher than 5 s; works without start().") { service, _ async throws(ServiceError) -> Value in
            try await service.current().value
        }
        d.event("didUpdateLocations", payload: "an array of locations, oldest first", "New fixes arrived.")
        d.event("didFail", payload: "an error {code, message}", "The provider cannot read its source (unavailable), or its data is bad.")
    }.erased
}
