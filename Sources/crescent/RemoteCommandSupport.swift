import CrescentKit
import Model

/// What the remote-control subcommands share: finding the host, calling it, and reporting
/// failures with the exit statuses of DESIGN.md (1 for a failure, 2 for a usage error).
enum RemoteCommandSupport {
    /// Connects to the host `target` names (nil: the only one listening), or exits 1 saying why.
    static func connect(_ target: String?) -> RemoteClient {
        do throws(RemoteError) {
            return try RemoteClient(host: target)
        } catch {
            fail(error.description)
        }
    }

    /// Calls `method`; exits 1 on a lost connection. An error answer is returned for the caller.
    /// What the chunk writes to stderr (its warnings, and the host's word that the request
    /// waits for a person to answer a permission question) is written as it comes.
    static func call(_ client: RemoteClient, _ method: String, _ params: Value = .null) -> Result<Value, JSONRPCError> {
        do throws(RemoteError) {
            return try client.call(method, params) { message in
                guard case .notification("output", let fields) = message, fields["stream"].stringValue == "stderr" else { return false }
                ProcessIO.writeError(bytes: RemoteOutput.bytes(of: fields))
                return true
            }
        } catch {
            fail(error.description)
        }
    }

    /// Calls `method` and returns its result, or prints the error and exits 1.
    static func result(_ client: RemoteClient, _ method: String, _ params: Value = .null) -> Value {
        switch call(client, method, params) {
        case .success(let value): return value
        case .failure(let error): fail(error.message)
        }
    }

    /// Splits positionals into an optional host name and the rest: with more words than the
    /// command needs, or when the first word names a listening host, the first is the host.
    static func split(_ words: [String], needs count: Int) -> (host: String?, rest: [String]) {
        guard let first = words.first, words.count > count else { return (nil, words) }
        return (first, Array(words.dropFirst()))
    }

    /// Prints `crescent: message` and exits 1.
    static func fail(_ message: String) -> Never {
        Crescent.fail(message)
    }
}
