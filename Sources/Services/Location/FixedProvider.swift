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

    func run(_ report: @escaping @Sendable (ProviderEvent) -> Void) async {
        while !Task.isCancelled {
            report(.fixes([LocationFix(latitude: latitude, longitude: longitude, altitude: altitude, speed: 0,
                                       accuracy: 0, time: Replay.wallClock(), provider: name)]))
            do { try await Task.sleep(for: .seconds(1)) } catch { return }
        }
    }
}
