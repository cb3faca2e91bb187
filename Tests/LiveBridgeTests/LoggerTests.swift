import Platform
import Foundation
@testable import LiveBridge
import Synchronization
import HomeAssistant
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
        // Through the logger's own handler: the process-wide route belongs to whichever daemon a parallel test runs.
        LibWebSocketsLog.emit(level: 1, line: "SSL error: self-signed certificate\n", to: logger.libraryLogHandler)
        LibWebSocketsLog.emit(level: 2, line: "\n", to: logger.libraryLogHandler)
        try #require(lines.values.count == 1)
        let object = try JSONSerialization.jsonObject(with: Data(lines.values[0].utf8)) as? [String: String]
        #expect(object?["level"] == "error")
        #expect(object?["msg"] == "libwebsockets")
        #expect(object?["detail"] == "SSL error: self-signed certificate")
    }

    /// A library line quoting a token the rules hold (libwebsockets writes what it likes) shows it masked.
    @Test func libraryLinesAreClearedOfTheRulesTokens() {
        let lines = Lines()
        let logger = Logger(level: .info) { lines.write($0) }
        logger.maskInLibraryLines([AccessToken("llat-library-secret-0123456789"), AccessToken("")])
        LibWebSocketsLog.emit(level: 1, line: "header Authorization: Bearer llat-library-secret-0123456789 refused\n", to: logger.libraryLogHandler)
        #expect(lines.values.count == 1)
        #expect(!lines.values[0].contains("llat-library-secret"), "\(lines.values)")
        #expect(lines.values[0].contains("refused"))
    }

    /// Two Home Assistant tokens (JWTs of one install share ~48 leading characters) masked together, as after a
    /// reload: each is found in the line as it came, so the old one's payload and signature go too. (From an
    /// independent review: masking one after the other left the old token's end.)
    @Test func twoTokensSharingAStartAreBothClearedWhole() {
        let header = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiI"
        let new = header + "NEWNEWNEWNEWNEWNEWNEW.payloadNew.signatureNewSecretSecret"
        let old = header + "OLDOLDOLDOLDOLDOLDOLD.payloadOld.signatureOldSecretSecret"
        let lines = Lines()
        let logger = Logger(level: .info) { lines.write($0) }
        logger.maskInLibraryLines([AccessToken(new), AccessToken(old)])
        LibWebSocketsLog.emit(level: 1, line: "header Authorization: Bearer \(old) refused\n", to: logger.libraryLogHandler)
        #expect(!lines.values[0].contains("signatureOldSecretSecret") && !lines.values[0].contains("OLDOLDOLD"), "\(lines.values)")
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

    /// What Home Assistant or a service may send: a forged field, CR, a terminal escape, NUL, U+2028, a bidi override.
    static let hostile = "ok level=error msg=\"forged\"\r\u{1B}[2J\u{0}\u{2028}\u{202E}x"

    @Test func logfmtEscapesEveryOutsideValueOntoOneLine() {
        let lines = Lines()
        let logger = Logger(level: .info, format: .text) { lines.write($0) }
        logger.warning("problem: " + Self.hostile, ["code": Self.hostile])
        let line = lines.values[0]
        let escaped = #""ok level=error msg=\"forged\"\r\u001b[2J\u0000\u2028\u202ex""#
        #expect(line.hasSuffix(#" level=warning msg="problem: "# + escaped.dropFirst() + " code=" + escaped), "\(line)")
        #expect(!line.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x2028 || $0.value == 0x202E })
        // Read as logfmt, the forged level and msg are inside quoted values: the line's keys are the logger's.
        #expect(Self.logfmtKeys(line) == ["time", "level", "msg", "code"])
    }

    /// The keys of a logfmt line, as a reader splits it (quoted values with backslash escapes).
    static func logfmtKeys(_ line: String) -> [String] {
        var keys: [String] = [], token = "", inQuotes = false, escaping = false, inValue = false
        for c in line {
            if inQuotes {
                if escaping { escaping = false } else if c == "\\" { escaping = true } else if c == "\"" { inQuotes = false }
            } else if c == "\"" {
                inQuotes = true
            } else if c == "=" && !inValue {
                keys.append(token)
                inValue = true
            } else if c == " " {
                token = ""
                inValue = false
            } else if !inValue {
                token.append(c)
            }
        }
        return keys
    }

    @Test func jsonEscapesLineSeparatorsAndControlsBeyondJSONsOwn() throws {
        let lines = Lines()
        let logger = Logger(level: .info, format: .json) { lines.write($0) }
        logger.info("m", ["code": Self.hostile + "\u{7F}\u{85}"])
        let line = lines.values[0]
        #expect(!line.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0.value == 0x2028 || $0.value == 0x202E })
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String]
        #expect(object?["code"] == Self.hostile + "\u{7F}\u{85}")
    }

    @Test func aHugeValueIsCutWithAMarkerOfHowMuch() throws {
        let lines = Lines()
        let text = Logger(level: .info, format: .text) { lines.write($0) }
        let json = Logger(level: .info, format: .json) { lines.write($0) }
        let huge = String(repeating: "a", count: 100_000)
        text.info(huge, ["body": huge])
        json.info("m", ["body": huge])
        let (textLine, jsonLine) = (lines.values[0], lines.values[1])
        let cut = String(repeating: "a", count: 1_000) + "…[99000 more bytes cut]"
        #expect(textLine.hasSuffix(" msg=\"\(cut)\" body=\"\(cut)\""), "\(textLine.suffix(80))")
        #expect(textLine.utf8.count < 2_200)
        let object = try JSONSerialization.jsonObject(with: Data(jsonLine.utf8)) as? [String: String]
        #expect(object?["body"] == cut)
    }

    /// A logfmt value written from its bytes is what the scalar-by-scalar rule gives: bare when printable ASCII
    /// without space, `"`, `=` or `\\`, else quoted with `\\`, `"`, newlines and tabs escaped and every unsafe scalar
    /// as `\\u`. Random values of ASCII, controls, DEL, C1, separators, bidi controls, emoji and accents.
    @Test func aValueIsWrittenAsTheScalarRuleSays() {
        func reference(_ value: String) -> String {
            let bare = !value.isEmpty && value.utf8.allSatisfy { (0x21...0x7E).contains($0) && $0 != 0x22 && $0 != 0x3D && $0 != 0x5C }
            return bare ? value : "\"" + Logger.escaped(value) + "\""
        }
        let pieces: [String] = ["a", "Z", "0", " ", "\"", "=", "\\", "\n", "\r", "\t", "\u{0}", "\u{1b}", "\u{7f}", "\u{85}",
                                "\u{9f}", "\u{2028}", "\u{202e}", "\u{feff}", "é", "☕", "😀", "~", "!", "{", "}", "a long run of words"]
        var generator = SystemRandomNumberGenerator()
        var values = pieces + [""]
        for _ in 0..<3_000 {
            values.append((0..<Int.random(in: 1...12, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined())
        }
        for value in values {
            var line: [UInt8] = []
            Logger.appendQuoted(value, to: &line)
            #expect(String(decoding: line, as: UTF8.self) == reference(value), "\(Array(value.unicodeScalars))")
        }
    }
}
