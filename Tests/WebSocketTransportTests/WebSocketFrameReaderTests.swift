import Platform
import Testing
@testable import WebSocketTransport

/// The client's own frame reader (RFC 6455 §5): whole messages whatever the reads' sizes, and every frame a client
/// must refuse refused with why.
struct WebSocketFrameReaderTests {
    /// A server's frame: unmasked unless `mask` is given.
    static func frame(_ opcode: UInt8, _ payload: [UInt8], final: Bool = true, rsv: UInt8 = 0, mask: [UInt8]? = nil) -> [UInt8] {
        var out: [UInt8] = [(final ? 0x80 : 0) | rsv | opcode]
        let maskBit: UInt8 = mask == nil ? 0 : 0x80
        switch payload.count {
        case ..<126: out.append(maskBit | UInt8(payload.count))
        case ..<65536: out += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        default:
            out.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((payload.count >> shift) & 0xFF)) }
        }
        if let mask {
            out += mask
            out += payload.enumerated().map { $0.element ^ mask[$0.offset & 3] }
        } else {
            out += payload
        }
        return out
    }

    /// Reads `bytes` in pieces cut at `cuts`, collecting events until a failure.
    static func read(_ bytes: [UInt8], cuts: [Int] = [], limit: Int = 1 << 20) -> (events: [WebSocketFrameReader.Event], failure: WebSocketFrameReader.ReadError?) {
        var reader = WebSocketFrameReader(maximumSize: limit)
        var events: [WebSocketFrameReader.Event] = []
        var start = 0
        for end in cuts.filter({ $0 > 0 && $0 < bytes.count }).sorted() + [bytes.count] where end >= start {
            let result = bytes[start..<end].withUnsafeBytes { raw in
                Result { () throws(WebSocketFrameReader.ReadError) in try reader.read(raw) { events.append($0) } }
            }
            if case .failure(let error) = result { return (events, error) }
            start = end
        }
        return (events, nil)
    }

    static let text = Array("{\"type\":\"event\"}".utf8)

    @Test(arguments: [0, 1, 125, 126, 65535, 65536, 300_000])
    func aMessageOfEveryLengthFormIsReadWholeHoweverTheReadsCutIt(length: Int) {
        let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let bytes = Self.frame(0x2, payload) + Self.frame(0x1, Self.text)
        let expected: [WebSocketFrameReader.Event] = [.message(payload, isText: false), .message(Self.text, isText: true)]
        #expect(Self.read(bytes).events == expected)
        // Every cut in the header and around the payload's edges, and a read of one byte at a time for short ones.
        for cut in Array(0...12) + [length, length + 1, length + 9, length + 11, bytes.count - 3] {
            #expect(Self.read(bytes, cuts: [cut]).events == expected, "cut at \(cut)")
        }
        if length <= 300 { #expect(Self.read(bytes, cuts: Array(0..<bytes.count)).events == expected) }
    }

    /// A message whole inside one read is offered where it stands first: one taken there is neither copied nor
    /// handed on; one declined comes as an event, as do messages split across reads or frames, in order.
    @Test func aWholeMessageIsOfferedInPlaceFirst() {
        let taken = Array("taken".utf8), declined = Array("declined".utf8)
        let bytes = Self.frame(0x1, taken) + Self.frame(0x2, declined) + Self.frame(0x9, Array("p".utf8))
            + Self.frame(0x1, Array("split".utf8), final: false) + Self.frame(0x0, Array(" message".utf8)) + Self.frame(0x1, taken)
        for cuts in [[], [3], [bytes.count - 2]] {
            var reader = WebSocketFrameReader(maximumSize: 1 << 20)
            var offered: [([UInt8], Bool)] = []
            var events: [WebSocketFrameReader.Event] = []
            var start = 0
            for end in cuts + [bytes.count] {
                bytes[start..<end].withUnsafeBytes { raw in
                    try? reader.read(raw, inPlace: { message, isText in
                        offered.append((Array(message), isText))
                        events.append(.pong(Array("offered".utf8)))  // marks where in the order it was offered
                        return Array(message) == taken
                    }) { events.append($0) }
                }
                start = end
            }
            let mark = WebSocketFrameReader.Event.pong(Array("offered".utf8))
            if cuts == [3] {
                // The first frame was cut: it comes as an event, copied.
                #expect(events == [.message(taken, isText: true), mark, .message(declined, isText: false), .ping(Array("p".utf8)),
                                   .message(Array("split message".utf8), isText: true), mark])
            } else if cuts == [bytes.count - 2] {
                #expect(events == [mark, mark, .message(declined, isText: false), .ping(Array("p".utf8)),
                                   .message(Array("split message".utf8), isText: true), .message(taken, isText: true)])
            } else {
                #expect(events == [mark, mark, .message(declined, isText: false), .ping(Array("p".utf8)),
                                   .message(Array("split message".utf8), isText: true), mark])
                #expect(offered.map(\.1) == [true, false, true])
            }
        }
    }

    @Test func fragmentsJoinAndControlFramesBetweenThemAreHandedOnAtOnce() {
        let bytes = Self.frame(0x1, Array("{\"a\":".utf8), final: false)
            + Self.frame(0x9, Array("hi".utf8))
            + Self.frame(0x0, [], final: false)
            + Self.frame(0xA, [])
            + Self.frame(0x0, Array("1}".utf8))
            + Self.frame(0x8, [0x03, 0xE8] + Array("bye".utf8))
        let expected: [WebSocketFrameReader.Event] = [
            .ping(Array("hi".utf8)), .pong([]), .message(Array("{\"a\":1}".utf8), isText: true),
            .close(code: 1000, reason: Array("bye".utf8)),
        ]
        for cut in 0..<bytes.count { #expect(Self.read(bytes, cuts: [cut, cut + 3]).events == expected, "cut at \(cut)") }
        #expect(Self.read(Self.frame(0x8, [])).events == [.close(code: nil, reason: [])])
        for code: UInt16 in [1000, 1001, 1003, 1007, 1011, 1014, 3000, 4999] {
            #expect(Self.read(Self.frame(0x8, [UInt8(code >> 8), UInt8(code & 0xFF)])).events == [.close(code: code, reason: [])])
        }
        for code: UInt16 in [0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000, 65535] {
            #expect(Self.read(Self.frame(0x8, [UInt8(code >> 8), UInt8(code & 0xFF)])).failure != nil, "code \(code)")
        }
    }

    @Test(arguments: [
        (frame(0x1, text, mask: [1, 2, 3, 4]), "a masked frame from the server"),
        (frame(0x1, text, rsv: 0x40), "reserved bits set (1000000) with no extension agreed"),
        (frame(0x3, text), "an unknown opcode 3"),
        (frame(0xB, []), "an unknown opcode 11"),
        (frame(0x9, [], final: false), "a fragmented control frame (opcode 9)"),
        (frame(0x9, [UInt8](repeating: 0, count: 126)), "a control frame (opcode 9) of 126 bytes, over 125"),
        (frame(0x0, text), "a continuation frame with no message begun"),
        (frame(0x1, text, final: false) + frame(0x1, text), "a new message (opcode 1) before the last one ended"),
        (frame(0x8, [0x03]), "a close frame of one byte"),
        (frame(0x8, [0x03, 0xED]), "a close frame with code 1005, which no peer may send"),
        (frame(0x8, [0x03, 0xEE]), "a close frame with code 1006, which no peer may send"),
        (frame(0x8, [0x03, 0xE7]), "a close frame with code 999, which no peer may send"),
        (frame(0x8, [0x13, 0x88]), "a close frame with code 5000, which no peer may send"),
        (frame(0x8, [0x03, 0xE8, 0xFF, 0xFE]), "a close frame whose reason is not UTF-8"),
        ([0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 0], "a 64-bit length with its top bit set"),
    ])
    func whatAClientMustRefuseIsRefusedWithWhy(bytes: [UInt8], why: String) {
        let expected = WebSocketFrameReader.ReadError.protocolError(why)
        #expect(Self.read(bytes).failure == expected)
        #expect(Self.read(bytes, cuts: Array(0..<bytes.count)).failure == expected)
        #expect(expected.description == "WebSocket protocol error: \(why)")
    }

    @Test func aMessageOverTheLimitIsRefusedFromItsHeaderWithoutBufferingIt() {
        // One frame announcing 2^40 bytes: refused on its header, before any payload.
        let huge: [UInt8] = [0x82, 127, 0, 0, 1, 0, 0, 0, 0, 0]
        #expect(Self.read(huge, limit: 1000).failure == .tooLarge(size: 1 << 40, limit: 1000))
        // Fragments that add up past the limit: refused at the fragment that crosses it.
        let fragments = Self.frame(0x1, [UInt8](repeating: 0x61, count: 600), final: false)
            + Self.frame(0x0, [UInt8](repeating: 0x61, count: 600))
        #expect(Self.read(fragments, limit: 1000).failure == .tooLarge(size: 1200, limit: 1000))
        // At the limit exactly, it is read.
        #expect(Self.read(Self.frame(0x1, [UInt8](repeating: 0x61, count: 1000)), limit: 1000).events.count == 1)
    }

    @Test func nothingAfterACloseIsRead() {
        // A close, then a frame that would fail: the reader stops at the close, in the same read or a later one.
        let bytes = Self.frame(0x8, [0x03, 0xE9]) + [0xC1, 0x00] + Self.frame(0x1, Self.text)
        #expect(Self.read(bytes).events == [.close(code: 1001, reason: [])])
        #expect(Self.read(bytes).failure == nil)
        #expect(Self.read(bytes, cuts: [4, 5]).failure == nil)
    }

    @Test func afterAFailureNothingMoreIsRead() {
        var reader = WebSocketFrameReader(maximumSize: 100)
        let bad = Self.frame(0x3, [])
        let good = Self.frame(0x1, Self.text)
        var events = 0
        #expect(throws: WebSocketFrameReader.ReadError.self) { try bad.withUnsafeBytes { try reader.read($0) { _ in events += 1 } } }
        #expect(throws: WebSocketFrameReader.ReadError.self) { try good.withUnsafeBytes { try reader.read($0) { _ in events += 1 } } }
        #expect(events == 0 && reader.pendingCount == 0)
    }

    @Test func aClientsFramesAreMaskedAndReadBackAsSent() {
        for length in [0, 5, 125, 126, 65535, 65536] {
            let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0) }
            var out: [UInt8] = []
            WebSocketFrameWriter.append(.text, isFinal: false, payload: payload, mask: 0xA1B2_C3D4, to: &out)
            #expect(out[0] == 0x01 && out[1] & 0x80 != 0, "length \(length): not final, masked")
            // Unmasked by hand, it reads as the message sent.
            let headerLength = length < 126 ? 2 : length < 65536 ? 4 : 10
            let key = Array(out[headerLength..<headerLength + 4])
            #expect(key == [0xA1, 0xB2, 0xC3, 0xD4])
            var unmasked = Array(out[..<headerLength])
            unmasked[0] |= 0x80
            unmasked[1] &= 0x7F
            unmasked += out[(headerLength + 4)...].enumerated().map { $0.element ^ key[$0.offset & 3] }
            #expect(Self.read(unmasked).events == [.message(payload, isText: true)])
        }
    }

    @Test func aCloseReasonIsCutAtACharactersEdgeToFitItsFrame() {
        let payload = WebSocketFrameWriter.closePayload(code: 1000, reason: String(repeating: "é", count: 100))
        #expect(payload.count == 124 && payload[0] == 0x03 && payload[1] == 0xE8)
        #expect(String(validating: payload[2...], as: UTF8.self) == String(repeating: "é", count: 61))
    }
}
