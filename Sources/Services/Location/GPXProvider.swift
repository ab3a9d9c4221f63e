import Model

/// Replays a GPX 1.1 track (``GPXParser``) at its recorded pace times `speedup`.
///
/// Points without `<time>` come one (recorded) second after the previous one and are stamped with
/// the time they are replayed. The replay ends at the last point; the position stays there.
struct GPXProvider: LocationProvider {
    let name = "gpx"
    let path: String
    let speedup: Double

    var source: String { path }

    func run(clock: any ServiceClock, _ report: @escaping @Sendable (ProviderEvent) -> Void) async {
        let points: [GPXParser.Point]
        do {
            points = try GPXParser.parse(try FileBytes.read(path))
        } catch {
            report(.failed(ServiceError(error.code, "\(path): \(error.message)")))
            report(.ended)
            return
        }
        let fixes = GPXParser.fixes(points)
        await Replay(fixes: fixes, speedup: speedup, recordedTimes: points.map(\.time)).run(clock: clock, report)
    }
}
