import Platform
import Foundation
import LiveBridge
import Synchronization
import Testing
@testable import WebSocketTransport

struct LoggerTests {
    final class Lines: Sendable {
        let all = Locked<[String]>([])
        func write(_ line: String) { all.withLock { $0.append(line) } }
        var values: [String] { all.withLock { $0 } }
    }

    @Test func logfmtQuotesWhatNeedsQuotingAndDropsLevelsBelowTheThreshold() {
        let lines = Lines()
        let logger = Logger(level: .info, format: .text) { lines.write($0) }
        logger.debug("not shown")
        logger.info("push", ["activity": "washer", "body": "a \"b\"=c"])
        #expect(lines.values.count == 1)
        let line = lines.values[0]
        #expect(line.hasPrefix("time="))
        #expect(line.hasSuffix(#" level=info msg=push activity=washer body="a \"b\"=c""#), "\(line)")
    }

    /// libwebsockets' lines come through the logger: one JSON object each, without libwebsockets' newline.
    @Test func libraryLinesBecomeLogLines() throws {
        let lines = Lines()
        let logger = Logger(level: .info, format: .json) { lines.write($0) }
        logger.takeLibraryLogs()
        defer { LibWebSocketsLog.route(to: nil) }
        LibWebSocketsLog.emit(level: 1, line: "SSL error: self-signed certificate\n")
        LibWebSocketsLog.emit(level: 2, line: "\n")
        #expect(lines.values.count == 1)
        let object = try JSONSerialization.jsonObject(with: Data(lines.values[0].utf8)) as? [String: String]
        #expect(object?["level"] == "error")
        #expect(object?["msg"] == "libwebsockets")
        #expect(object?["detail"] == "SSL error: self-signed certificate")
    }

    @Test func jsonLinesAreValidJSONWithTheFields() throws {
        let lines = Lines()
        let logger = Logger(level: .debug, format: .json) { lines.write($0) }
        logger.warning("line\nbreak", ["code": "x\u{1}"])
        let object = try JSONSerialization.jsonObject(with: Data(lines.values[0].utf8)) as? [String: String]
        #expect(object?["level"] == "warning")
        #expect(object?["msg"] == "line\nbreak")
        #expect(object?["code"] == "x\u{1}")
    }
}
