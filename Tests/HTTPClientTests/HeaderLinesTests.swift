import ConnectionTestSupport
@testable import HTTPClient
import Testing

/// An answer's headers are kept as the lines libcurl handed over and parsed only when read: the parse must give what
/// taking each line as it came gave (name before the first colon, lowercased in ASCII; value trimmed of space, tab
/// and the line's end; a line without a colon ignored; a repeated name keeps its last value).
struct HeaderLinesTests {
    /// The rule as it was applied to each line in libcurl's header callback.
    static func takenLineByLine(_ lines: [[UInt8]]) -> [String: String] {
        var headers: [String: String] = [:]
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }
        for line in lines {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
            let name = String(decoding: line[..<colon].map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
            var start = colon + 1, end = line.count
            while start < end, isSpace(line[start]) { start += 1 }
            while end > start, isSpace(line[end - 1]) { end -= 1 }
            headers[name] = String(decoding: line[start..<end], as: UTF8.self)
        }
        return headers
    }

    @Test func parsedLinesEqualTheLineByLineRule() {
        var random = SeededRandom(state: 36)
        // Bytes a header line may carry (libcurl hands over whole lines: no LF inside one), weighted to make colons,
        // spaces, capitals, CRs and non-ASCII bytes common.
        let alphabet: [UInt8] = Array("Retry-After: 30\t\r ABCXYZxyz@[`{:;é".utf8) + [0x00, 0x7F, 0xC3, 0xFF, 0x0D]
        for _ in 0..<3_000 {
            var lines: [[UInt8]] = []
            for _ in 0..<Int.random(in: 0...6, using: &random) {
                var line = (0..<Int.random(in: 0...24, using: &random)).map { _ in alphabet.randomElement(using: &random)! }
                line += Bool.random(using: &random) ? [0x0D, 0x0A] : [0x0A]
                lines.append(line)
            }
            if Bool.random(using: &random) { lines.append([0x0D, 0x0A]) }  // the blank line closing the block
            let expected = Self.takenLineByLine(lines)
            #expect(HTTPResponse.headers(fromLines: lines.flatMap { $0 }) == expected, "\(lines)")
        }
    }

    @Test func anAnswerReadsItsHeadersAndComparesByThem() {
        let lines = Array("Content-Type: application/json\r\nRETRY-AFTER:  30 \r\nX-Empty:\r\nno colon here\r\n\r\n".utf8)
        let lazy = HTTPResponse(status: 429, headerLines: lines, body: [1], connectionsOpened: 0)
        #expect(lazy.headers == ["content-type": "application/json", "retry-after": "30", "x-empty": ""])
        #expect(lazy == HTTPResponse(status: 429, headers: ["content-type": "application/json", "retry-after": "30", "x-empty": ""], body: [1]))
        #expect(lazy != HTTPResponse(status: 429, headers: ["retry-after": "30"], body: [1]))
        #expect(HTTPResponse(status: 200, headerLines: [], body: [], connectionsOpened: 0).headers.isEmpty)
    }
}
