import Model

/// What a handler returns is ignored ("no magic return values"), but people from GLib (`return
/// false` stops a timeout) or Neovim autocmds (`return true` deletes one) write exactly that and
/// see the handler called on and on without a word. A `true` or `false` from a handler whose
/// subscription goes on is said once per subscription, at the place it was made, with the way to
/// end it; `nil` and every other value say nothing. (Timers say the same in ``Host``'s `fire`.)
extension ModelBinding {
    /// Called only when the handler's first result was a boolean, so the delivery pays one type
    /// test; kept out of line so the delivery's code stays small.
    ///
    /// - Parameters:
    ///   - value: the boolean returned.
    ///   - subscription: the subscription delivered to; a one-shot (`{ once = true }`) or one the
    ///     handler cancelled ends anyway, and is not named.
    ///   - delegateMethod: the method of an observer added with `addObserver` that returned it, of
    ///     `object`; nil for a handler given to `on` or `observe`.
    @inline(never)
    func noteIgnoredReturn(_ value: Bool, of subscription: Subscription, delegateMethod: String? = nil, of object: ObjectHandle? = nil) {
        guard subscription.isActive, !subscription.once, !subscription.saidReturnIgnored else { return }
        subscription.saidReturnIgnored = true
        host.warn("\(subscription.site): " + Self.ignoredReturn(value, of: subscription, delegateMethod: delegateMethod, of: object))
    }

    /// The warning's text after the site: what returned what, that it is ignored, and the fix for
    /// that kind of handler.
    static func ignoredReturn(_ value: Bool, of subscription: Subscription, delegateMethod: String?, of object: ObjectHandle?) -> String {
        if let delegateMethod {
            let name = object?.typeName ?? "object"
            let remove = object?.object.isService == true ? "services.\(name):removeObserver(observer)"
                : "removeObserver(observer) on the \(name) it was added to"
            return "the observer's method \(delegateMethod) returned \(value), and a method's value is ignored, so the observer "
                + "stays: stop it with \(remove)"
        }
        let (function, argument) = switch subscription.target {
        case .property: ("observe", "change.sub")
        case .event, .allEvents: ("on", "info.sub")
        }
        return "the \(subscription.targetDescription) handler returned \(value), and a handler's value is ignored, so the "
            + "subscription goes on: stop it with sub:cancel() (sub is what \(function) returned, and \(argument) inside the handler), "
            + "or pass { once = true } to \(function) for a single delivery"
    }
}
