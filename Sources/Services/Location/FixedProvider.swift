import Model

/// One position, reported at once and then once a second (as a receiver at rest reports), each
/// time stamped with the current time. Accuracy is 0.
struct FixedProvider: LocationProvider {
    let name = "fixed"
    let latitude: Double
    let longitude: Double
    let altitude: Double?

    var source: String {
        "\(latitude),\(longitude)" + (altitude.map { ",\($0)" } ?? "")
    }

    func run(clock: any ServiceClock, _ report: @escaping @Sendable (ProviderEvent) -> Void) async {
        await clock.repeating { [self] in
            report(.fixes([LocationFix(latitude: latitude, longitude: longitude, altitude: altitude, speed: 0,
                                       accuracy: 0, time: clock.wallTime, provider: name)]))
            return .seconds(1)
        }
    }
}
