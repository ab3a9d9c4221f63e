import Foundation
import Model
@testable import Services
import Testing

/// A server whose answer is not HTTP (harden4 H8): the error says so, naming the URL, instead of
/// the parser's own words ("invalid constant string").
@Suite struct HTTPGarbageAnswerTests {
    @Test func anAnswerThatIsNotHTTPIsNamedAsSuch() async throws {
        let listener = try ClosingListener.listenOnLoopback(backlog: 4)
        defer { close(listener.descriptor) }
        let descriptor = listener.descriptor
        Thread {
            let client = accept(descriptor, nil, nil)
            guard client >= 0 else { return }
            var request = [UInt8](repeating: 0, count: 4096)
            _ = read(client, &request, request.count)
            let garbage = Array("garbage\r\n\r\n".utf8)
            _ = write(client, garbage, garbage.count)
            usleep(200_000)
            close(client)
        }.start()
        let http = try HTTPService(environment: [:])
        let url = "http://127.0.0.1:\(listener.port)/nostatus"
        let error = await failure { try await http.fetch(HTTPRequestSpec(url: url)) }
        #expect(error?.code == .network, "\(String(describing: error))")
        #expect(error?.message.hasPrefix("the server at \(url) did not answer in HTTP/1.x") == true, "\(String(describing: error))")
    }
}
