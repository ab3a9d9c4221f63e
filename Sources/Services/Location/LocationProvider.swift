import Glibc
import Model

/// What a provider tells the location service.
enum ProviderEvent: Sendable {
    /// New fixes, oldest first.
    case fixes([LocationFix])
    /// The source cannot be read now (gpsd unreachable, a device gone); the provider keeps trying.
    case failed(ServiceError)
    /// A finite source (a file replay) has no more fixes.
    case ended
}

/// A source of fixes: gpsd, an NMEA file or device, a GPX track, a fixed point.
///
/// ``run(_:)`` runs while the service is started (or a `current()` call waits) and returns when
/// its task is cancelled; a finite source reports ``ProviderEvent/ended`` and returns earlier.
protocol LocationProvider: Sendable {
    /// `gpsd`, `nmea`, `gpx` or `fixed`: the `provider` of its fixes.
    var name: String { get }
    /// Where it reads from, for messages and `help` (`127.0.0.1:2947`, a file).
    var source: String { get }
    /// Reports fixes and failures through `report` until cancelled, reading time and waiting
    /// through `clock`.
    func run(clock: any ServiceClock, _ report: @escaping @Sendable (ProviderEvent) -> Void) async
    /// For a provider that only schedules jobs on `clock`: starts it without a task and returns
    /// what stops it, reporting nothing before it returns (the service holds its lock). Nil (the
    /// default): the service runs ``run(clock:_:)`` in a task.
    func start(clock: any ServiceClock, _ report: @escaping @Sendable (ProviderEvent) -> Void) -> Cancellation?
}

extension LocationProvider {
    func start(clock: any ServiceClock, _ report: @escaping @Sendable (ProviderEvent) -> Void) -> Cancellation? { nil }
}
