import Model

/// Replays a GPX 1.1 track (``GPXParser``) at its recorded pace times `speedup`, reading the
/// file as the replay goes: the first fix comes once the first point is read, and a track of
/// any length takes the same memory.
///
/// Points without `<time>` come one (recorded) second after the previous one and are stamped with
/// the time they are replayed. The replay ends at the last point; the position stays there. A
/// problem further in the file (a bad point, malformed XML) is reported when the replay gets
/// there, after the fixes before it.
struct GPXProvider: LocationProvider {
    let name = "gpx"
    let path: String
    let speedup: Double

    var source: String { path }

    func run(clock: any ServiceClock, _ report: @escaping @Sendable (ProviderEvent) -> Void) async {
        let parser: GPXParser
        do {
            parser = try GPXParser(path: path)
        } catch {
            report(.failed(ServiceError(error.code, "\(path): \(error.message)")))
            report(.ended)
            return
        }
        await Replay(source: Track(parser: parser, path: path), speedup: speedup).run(clock: clock, report)
    }

    /// The track's points as fixes, errors naming the file.
    private struct Track: ReplaySource {
        var parser: GPXParser
        let path: String
        var maker = GPXParser.FixMaker()
        var points = 0

        mutating func next() throws(ServiceError) -> (fix: LocationFix, recordedTime: Double?)? {
            do throws(ServiceError) {
                guard let point = try parser.next() else {
                    if points == 0 { throw ServiceError(.invalidData, "no track points in the file (no <trkpt> with lat and lon)") }
                    return nil
                }
                points += 1
                return (maker.fix(point), point.time)
            } catch {
                throw ServiceError(error.code, "\(path): \(error.message)")
            }
        }
    }
}
