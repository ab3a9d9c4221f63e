import Glibc
import Model

/// Reads a provider setting, from `--location` or `provider = "..."` under `[location]` in
/// `crescent.toml`:
///
/// | setting | provider |
/// |---|---|
/// | `gpsd`, `gpsd:HOST`, `gpsd:HOST:PORT`, `gpsd:[IPV6]:PORT` | gpsd, default `127.0.0.1:2947` |
/// | `nmea:FILE[@10x]`, `nmea:/dev/ttyUSB0` | NMEA 0183 file replay (at its recorded rate, or faster) or device |
/// | `gpx:FILE[@60x]` | GPX 1.1 track replay |
/// | `fixed:LAT,LON[,ALT]` | one position |
///
/// Files must exist when the host starts; they are read when the service starts.
public enum LocationProviderSpec {
    /// The providers' names, as a setting starts.
    static let kinds = ["gpsd", "nmea", "gpx", "fixed"]

    /// What is wrong with `setting`'s provider name (`fixd:1,2`, a bare `48.85,2.35`), with the
    /// setting it most likely meant; nil when it names a provider (its argument is checked when
    /// the service starts).
    public static func unknownProvider(_ setting: String) -> String? {
        let setting = setting.trimmingSpaces
        let kind = String(setting.prefix { $0 != ":" })
        guard !kinds.contains(kind) else { return nil }
        let argument = setting.dropFirst(kind.count)
        let numbers = setting.split(separator: ",", omittingEmptySubsequences: false).map { Double($0.trimmingSpaces) }
        let meant: String?
        if (2...3).contains(numbers.count), !numbers.contains(nil) {
            meant = "fixed:" + setting
        } else {
            meant = NameSuggestion.closest(to: kind, among: kinds).map { $0 + argument }
        }
        return "unknown location provider '\(kind)' (use gpsd, nmea:FILE, gpx:FILE or fixed:LAT,LON)"
            + (meant.map { "; did you mean '\($0)'?" } ?? "")
    }

    /// What is wrong with a known provider's argument (`fixed:1`, `gpx:` with no file, a file
    /// that cannot be read, `gpsd:HOST:99999`), which needs nothing the host has at its start
    /// (files must exist then), so a command line can refuse it as a usage error; nil otherwise.
    public static func argumentProblem(_ setting: String) -> String? {
        let setting = setting.trimmingSpaces
        let kind = String(setting.prefix { $0 != ":" })
        guard kinds.contains(kind) else { return nil }
        do throws(ServiceError) {
            // Building a provider opens nothing: files are only checked for access here.
            _ = try provider(setting)
            return nil
        } catch {
            // Said after the setting by the caller: without the provider's own `location gpx:…: `
            // (which names the setting or the part of it that is wrong).
            guard error.message.hasPrefix("location "), let end = error.message.firstRange(of: ": ") else { return error.message }
            return String(error.message[end.upperBound...])
        }
    }

    /// The provider a setting names; nil setting means gpsd at its default address.
    static func provider(_ setting: String?) throws(ServiceError) -> any LocationProvider {
        guard let setting = setting?.trimmingSpaces, !setting.isEmpty else {
            return GpsdProvider(host: GpsdProvider.defaultHost, port: GpsdProvider.defaultPort)
        }
        let kind = setting.prefix { $0 != ":" }
        let argument = setting.dropFirst(kind.count + 1)
        switch kind {
        case "gpsd": return try gpsd(argument)
        case "nmea":
            let (path, speedup) = try file(argument, kind: "nmea")
            return NMEAProvider(path: path, speedup: speedup)
        case "gpx":
            let (path, speedup) = try file(argument, kind: "gpx")
            return GPXProvider(path: path, speedup: speedup)
        case "fixed": return try fixed(argument)
        default:
            throw ServiceError(.invalidArgument, unknownProvider(setting) ?? "unknown location provider '\(kind)'")
        }
    }

    private static func gpsd(_ argument: Substring) throws(ServiceError) -> GpsdProvider {
        guard !argument.isEmpty else { return GpsdProvider(host: GpsdProvider.defaultHost, port: GpsdProvider.defaultPort) }
        var host = argument
        var portText: Substring?
        if argument.hasPrefix("[") {
            guard let close = argument.firstIndex(of: "]") else {
                throw ServiceError(.invalidArgument, "location gpsd:\(argument): a '[' address needs its ']'")
            }
            host = argument[argument.index(after: argument.startIndex)..<close]
            let rest = argument[argument.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { throw ServiceError(.invalidArgument, "location gpsd:\(argument): expected ':PORT' after ']'") }
                portText = rest.dropFirst()
            }
        } else if let colon = argument.lastIndex(of: ":"), argument.firstIndex(of: ":") == colon {
            host = argument[..<colon]
            portText = argument[argument.index(after: colon)...]
        }
        var port = GpsdProvider.defaultPort
        if let portText {
            guard let number = Int(portText), (1...65_535).contains(number) else {
                throw ServiceError(.invalidArgument, "location gpsd:\(argument): the port must be a number in [1, 65535], got '\(portText)'")
            }
            port = number
        }
        return GpsdProvider(host: host.isEmpty ? GpsdProvider.defaultHost : String(host), port: port)
    }

    /// The speed-ups a replay accepts: slower than a thousandth or faster than a million times
    /// the recorded pace makes no sense, and the waits it computes must stay finite.
    static let speedups: ClosedRange<Double> = 0.001...1_000_000

    /// `FILE` or `FILE@10x`: the path (which must exist) and the speed-up (default 1). A path that
    /// names an existing file as a whole is that file, `@` and all.
    private static func file(_ argument: Substring, kind: String) throws(ServiceError) -> (String, Double) {
        var path = argument
        var speedup = 1.0
        if let at = argument.lastIndex(of: "@"), access(String(argument), F_OK) != 0 {
            var factor = argument[argument.index(after: at)...]
            if factor.hasSuffix("x") || factor.hasSuffix("X") { factor = factor.dropLast() }
            guard let number = Double(factor), speedups.contains(number) else {
                throw ServiceError(.invalidArgument, "location \(kind):\(clipped(argument)): the speed-up after '@' must be a number in [0.001, 1000000] followed by x (\(kind):FILE@10x), got '\(clipped(argument[argument.index(after: at)...]))'")
            }
            path = argument[..<at]
            speedup = number
        }
        guard !path.isEmpty else { throw ServiceError(.invalidArgument, "location \(kind): needs a file (\(kind):FILE)") }
        guard access(String(path), R_OK) == 0 else {
            throw ServiceError(.invalidArgument, "location \(kind):\(clipped(path)): cannot read the file: \(String(cString: strerror(errno)))")
        }
        return (String(path), speedup)
    }

    private static func fixed(_ argument: Substring) throws(ServiceError) -> FixedProvider {
        guard !argument.isEmpty else {
            throw ServiceError(.invalidArgument, "location fixed: needs a position: fixed:LAT,LON[,ALT] in degrees (and metres)")
        }
        let parts = argument.split(separator: ",", omittingEmptySubsequences: false).map { Double($0.trimmingSpaces) }
        guard (2...3).contains(parts.count), let latitude = parts[0], let longitude = parts[1] else {
            throw ServiceError(.invalidArgument, "location fixed:\(clipped(argument)): expected fixed:LAT,LON[,ALT] in degrees (and metres)")
        }
        let point = try GeoPoint(value: .object(["lat": .number(latitude), "lon": .number(longitude)]), label: "location fixed: ")
        var altitude: Double?
        if parts.count == 3 {
            guard let value = parts[2], value.isFinite else {
                throw ServiceError(.invalidArgument, "location fixed:\(clipped(argument)): the altitude must be a number")
            }
            altitude = value
        }
        return FixedProvider(latitude: point.latitude, longitude: point.longitude, altitude: altitude)
    }
}

extension Substring {
    fileprivate var trimmingSpaces: String { String(self).trimmingSpaces }
}
