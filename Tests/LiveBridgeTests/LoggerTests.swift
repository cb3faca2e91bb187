import Foundation
import LiveBridge
import Synchronization
import Testing

struct LoggerTests {
    final class Lines: Sendable {
        let all = Mutex<[String]>([])
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
