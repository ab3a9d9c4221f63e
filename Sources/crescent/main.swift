import CrescentKit
import Foundation

exit(ScriptRunner.run(.file(CommandLine.arguments[1]), options: HostOptions()))
