/// The hook of a test that was running when the test was stopped (an exit, the time limit),
/// which unwinds the runner before it can say where: the testing prelude notes each hook as it
/// starts (`T.noteHook`), and a stop there is reported as busted reports that hook failing.
struct SpecHookUnderWay: Sendable {
    /// As busted names it: `describe-name setup`.
    let name: String
    /// `setup`, `before_each` or `after_each`.
    let kind: String
    /// For an `after_each`: the test's own outcome (`passed`, `failed`, `error`, `pending`) and
    /// message, which it keeps, as when the hook raises an error.
    let testStatus: String?
    let testMessage: String

    /// The test's outcome once `stop` (why it was stopped) ended it in this hook.
    func outcome(stoppedBy stop: String, output: String) -> SpecOutcome {
        guard kind == "after_each", let testStatus else {
            // A setup or before_each: the test never ran; busted reports the hook instead.
            return SpecOutcome(passed: false, message: stop, output: output, status: .error, reportedName: name,
                               isSetupFailure: kind == "setup")
        }
        let status: SpecResult.Status = switch testStatus {
        case "passed": .passed
        case "pending": .pending
        case "failed": .failed
        default: .error
        }
        return SpecOutcome(passed: status == .passed, message: testMessage, output: output, status: status,
                           afterHook: SpecHookFailure(name: name, message: stop, isTeardown: false))
    }
}
