import JSON
import Testing

/// The pull reader: typed reads, skipping that still checks, and ranges read later.
struct JSONReaderTests {
    func read<T>(_ text: String, _ body: (inout JSONReader) throws -> T) throws -> T { try JSONText(text).read(body) }

    @Test func readsMembersInOrderAndSkipsWhatTheCallerLeaves() throws {
        var seen: [String] = []
        var state: String?
        try read(#" { "s" : "on", "skip": {"deep": [1, {"x": null}]}, "n": 2 } "#) { reader in
            try reader.readObject { reader, key in
                seen.append(key)
                if key == "s" { state = try reader.readStringIfPresent() }
            }
        }
        #expect(seen == ["s", "skip", "n"])
        #expect(state == "on")
    }

    /// `readMembers` compares keys without making Strings: escaped keys compare by their decoded text, and a key is
    /// only equal to a name of the same bytes.
    @Test func membersComparesKeysAsTheirDecodedText() throws {
        var matched: [String] = []
        try read(#"{"c": 1, "\u0063": 2, "cc": 3, "": 4, "é": 5, "\u00e9": 6, "c\"": 7}"#) { reader in
            try reader.readMembers { reader, key in
                let value = try reader.readValue().intValue!
                switch key {
                case "c": matched.append("c=\(value)")
                case "": matched.append("empty=\(value)")
                case "é": matched.append("é=\(value)")
                default: matched.append("other \(key.string)=\(value)")
                }
            }
        }
        #expect(matched == ["c=1", "c=2", "other cc=3", "empty=4", "é=5", "é=6", "other c\"=7"])
        #expect(throws: JSONParser.SyntaxError.self) { try read("{\"a\u{1}\": 1}") { reader in try reader.readMembers { _, _ in } } }
    }

    /// The unchecked skip finds the end a strict one finds on well-formed text, and stays within any bytes.
    @Test func theUncheckedSkipFindsTheSameEnds() throws {
        for text in [#"{"a":[1,{"b":"}]\""}],"c":null},2"#, #""x\\",1"#, #"-1.5e3,0"#, #"[[],{}],0"#] {
            let (strict, unchecked) = try read("[" + text + "]") { reader -> (Range<Int>, Range<Int>) in
                var copy = reader
                var strict: Range<Int>?, unchecked: Range<Int>?
                try reader.readArray { reader in if strict == nil { strict = try reader.skipValueRange() } }
                try copy.readArray { reader in if unchecked == nil { unchecked = reader.skipValueRangeUnchecked() } }
                return (strict!, unchecked!)
            }
            #expect(strict == unchecked, "\(text)")
        }
        for garbage in ["{", "\"", "\"\\", "]]]", "{\"a\":\"", "", "tru"] {
            let bytes = Array(garbage.utf8)
            let range = bytes.withUnsafeBufferPointer { buffer in
                var reader = JSONReader(buffer)
                return reader.skipValueRangeUnchecked()
            }
            #expect(range.upperBound <= bytes.count, "\(garbage)")
        }
    }

    /// Strings are scanned eight bytes at a time: whatever needs a look (an escape, a control character, UTF-8, the
    /// closing quote) is found at every offset within and across the eight, by reading and by skipping.
    @Test func stringsAreCheckedAtEveryOffsetOfTheWordScan() throws {
        let valid: [(json: [UInt8], text: String)] = [
            (Array(#"\""#.utf8), "\""), (Array(#"\\"#.utf8), "\\"), (Array(#"\n"#.utf8), "\n"), (Array("é".utf8), "é"),
            (Array("😀".utf8), "😀"), (Array("~".utf8), "~"),
        ]
        let invalid: [[UInt8]] = [[0x01], [0x1F], [0xC0, 0x80], [0xFF], Array(#"\x"#.utf8)]
        for offset in 0..<20 {
            let before = Array(repeating: UInt8(ascii: "a"), count: offset), after = Array(repeating: UInt8(ascii: "b"), count: 19 - offset)
            for (json, text) in valid {
                let bytes = [0x22] + before + json + after + [0x22]
                let expected = String(repeating: "a", count: offset) + text + String(repeating: "b", count: 19 - offset)
                #expect(try JSONParser.parse(bytes) == .string(expected), "\(offset) \(text)")
                #expect(try JSONText(ArraySlice(bytes)).read { try $0.skipValue() } == (), "\(offset) \(text)")
            }
            for json in invalid {
                let bytes = [0x22] + before + json + after + [0x22]
                #expect(throws: JSONParser.SyntaxError.self, "\(offset) \(json)") { try JSONParser.parse(bytes) }
                #expect(throws: JSONParser.SyntaxError.self, "\(offset) \(json)") { try JSONText(ArraySlice(bytes)).read { try $0.skipValue() } }
            }
            // Unterminated, ending anywhere in a word.
            #expect(throws: JSONParser.SyntaxError.self) { try JSONParser.parse([0x22] + before) }
            #expect(throws: JSONParser.SyntaxError.self) { try JSONText(ArraySlice([0x22] + before)).read { try $0.skipValue() } }
        }
    }

    @Test func typedReadsGiveNilForOtherKindsAndMoveOn() throws {
        let values: [Double?] = try read(#"[1, 2.5, "3", null, {"a": 1}, -4e2]"#) { reader in
            var out: [Double?] = []
            try reader.readArray { reader in out.append(try reader.readDoubleIfPresent()) }
            return out
        }
        #expect(values == [1, 2.5, nil, nil, nil, -400])
        let strings: [String?] = try read(#"["a\u00e9\n", 5, ["x"], "ü"]"#) { reader in
            var out: [String?] = []
            try reader.readArray { reader in out.append(try reader.readStringIfPresent()) }
            return out
        }
        #expect(strings == ["aé\n", nil, nil, "ü"])
    }

    @Test func aSkippedRangeReadsLater() throws {
        let value = try read(#"{"later": {"k": [true, "v"]}, "x": 1}"#) { reader -> JSONValue in
            var range: Range<Int>?
            try reader.readObject { reader, key in if key == "later" { range = try reader.skipValueRange() } }
            var sub = reader.subreader(range!)
            return try sub.readValue()
        }
        #expect(value == ["k": [true, "v"]])
    }

    /// Text already checked (an event cut out of its frame) is skipped by finding each value's end only: the ranges
    /// are exactly those the strict skip gives, escaped quotes and brackets inside strings included.
    @Test func checkedTextSkipsToTheSameEnds() throws {
        let text = #"{"a": {"s": "q\"}]{", "n": [1, -2.5e3, true, null, {"x": "\\"}]}, "b": 12, "c": "}", "d": [], "e": {}, "f": false}"#
        func ranges(_ text: JSONText) throws -> [String: Range<Int>] {
            try text.read { reader in
                var found: [String: Range<Int>] = [:]
                try reader.readObject { reader, key in found[key] = try reader.skipValueRange() }
                return found
            }
        }
        let strict = try ranges(JSONText(text))
        #expect(strict.count == 6)
        #expect(try ranges(JSONText(checked: ArraySlice(text.utf8))) == strict)
        // A checked reader hands the flag to its subreaders, and reading values stays strict.
        let inner: JSONValue = try JSONText(checked: ArraySlice(text.utf8)).read { reader in
            var range: Range<Int>?
            try reader.readObject { reader, key in if key == "a" { range = try reader.skipValueRange() } }
            var sub = reader.subreader(range!)
            return try sub.readValue()
        }
        #expect(inner["s"] == "q\"}]{")
    }

    /// Bytes wrongly said to be checked are never read outside the text, and skipping still ends.
    @Test(arguments: [#"{"a": "open"#, #"{"a": [[[["#, #"{"a": 1"#, #"{"a": "\"#, "{\"a\": }}}}"])
    func checkedSkippingStaysInsideBadText(text: String) {
        _ = try? JSONText(checked: ArraySlice(text.utf8)).read { reader in
            try reader.readObject { reader, _ in _ = try reader.skipValueRange() }
        }
    }

    /// Skipping is as strict as parsing: the same bad inputs throw either way.
    @Test(arguments: [#""\x""#, #""a\ud800\u12""#, #""\u12g4""#, "\"tab\there\"", "01", "1.", "-", "1e", "-.5", "1.e3", ".5", "+1", "[1,]", "{\"a\" 1}", "tru", "nul", "\"open",
                      "[" + String(repeating: "[", count: 600) + String(repeating: "]", count: 601)])
    func skippingRejectsWhatParsingRejects(text: String) {
        #expect(throws: JSONParser.SyntaxError.self) { try JSONParser.parse(text) }
        #expect(throws: JSONParser.SyntaxError.self) { try read(text) { try $0.skipValue() } }
    }

    @Test(arguments: [[0xC0, 0x80], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xC3], [0x80], [0xFF]] as [[UInt8]])
    func skippingRejectsInvalidUTF8(sequence: [UInt8]) {
        let bytes = Array("[\"a".utf8) + sequence + Array("b\"]".utf8)
        #expect(throws: JSONParser.SyntaxError.self) { try JSONParser.parse(bytes) }
        #expect(throws: JSONParser.SyntaxError.self) { try JSONText(bytes[...]).read { try $0.skipValue() } }
    }

    @Test func skippingAcceptsValidMultibyteText() throws {
        try read(#"["é", "€", "😀", "a\"b", "\u00e9"]"#) { try $0.skipValue() }
    }

    /// Literals are compared eight bytes at a time: every length, every mismatching byte, the text ending inside one.
    @Test func consumingComparesTheWholeLiteralAndNothingPastTheText() {
        let empty: [UInt8] = []
        empty.withUnsafeBufferPointer { bytes in
            var reader = JSONReader(bytes)
            let emptyTaken = reader.consume(""), braceTaken = reader.consume("{")
            #expect(emptyTaken)
            #expect(!braceTaken)
        }
        let literal: StaticString = #"{"type":"event","event":{"c":{"#
        let text = Array(#"{"type":"event","event":{"c":{"x"#.utf8)
        for length in 0...text.count {
            for changed in -1..<min(length, 30) {
                var bytes = Array(text.prefix(length))
                if changed >= 0 { bytes[changed] ^= 0x01 }
                bytes.withUnsafeBufferPointer { buffer in
                    var reader = JSONReader(buffer)
                    let taken = reader.consume(literal)
                    #expect(taken == (length >= 30 && changed < 0), "length \(length), byte \(changed)")
                }
            }
        }
    }

    @Test func textsAreEqualWhenTheirValuesAre() {
        #expect(JSONText(#"{"a": 1, "b": [2]}"#) == JSONText(#"{"b":[2],"a":1}"#))
        #expect(JSONText(#"{"a": 1}"#) != JSONText(#"{"a": 2}"#))
    }
}

/// Numbers read from their digits must equal what strtod gives, bit for bit.
struct JSONNumberTests {
    @Test func decimalsAndIntegersMatchTheStandardConversion() throws {
        var seed: UInt64 = 0x9E3779B97F4A7C15
        func next() -> UInt64 { seed = seed &* 6364136223846793005 &+ 1442695040888963407; return seed >> 11 }
        var texts = ["0", "-0", "0.0", "-0.0", "0.1", "1795348800.123456", "9007199254740993.5", "123456789012345678",
                     "1234567890123456789", "-9223372036854775808", "0.30000000000000004", "4.35", "1e3", "2.5E-3", "100.000000000000000000001"]
        // Timestamps as Python writes them: 16–18 significant digits, above 2^53 as an integer.
        for _ in 0..<20_000 {
            let digits = String(1_000_000_000_000_000 + next() % 9_000_000_000_000_000)  // 16 digits, then trimmed or grown
            let length = 16 + Int(next() % 3)
            let all = String((digits + String(next() % 100)).prefix(length))
            let point = 1 + Int(next() % UInt64(all.count - 1))
            texts.append(String(all.prefix(point)) + "." + String(all.dropFirst(point)))
        }
        for _ in 0..<20_000 {
            let integer = next() % 10_000_000_000
            let fractionDigits = Int(next() % 12)
            var fraction = ""
            for _ in 0..<fractionDigits { fraction += String(next() % 10) }
            texts.append((next() % 2 == 0 ? "-" : "") + String(integer) + (fraction.isEmpty ? "" : "." + fraction))
        }
        // Runs of digits of every length around the eight taken at once and the 18 kept, with zeros and nines (the
        // bytes next to a digit's range), ending the text or followed by a member's comma.
        for _ in 0..<20_000 {
            func digits(_ count: Int) -> String {
                String((0..<count).map { _ in Character(String([0, 9, 9, 0, 1, 5][Int(next() % 6)] == 5 ? Int(next() % 10) : [0, 9, 9, 0, 1, 5][Int(next() % 6)])) })
            }
            let integer = String(1 + next() % 9) + digits(Int(next() % 20))
            let fraction = next() % 3 == 0 ? "" : "." + digits(1 + Int(next() % 20))
            texts.append(integer + fraction)
        }
        // The bytes just past "9" (":;<=>?") end a number like any other: never taken as digits.
        for length in 1...16 {
            for byte in ":;<=>?" {
                let digits = String("1234567890123456".prefix(length))
                #expect(throws: JSONParser.SyntaxError.self, "\(digits)\(byte)") { try JSONParser.parse("[" + digits + String(byte) + "]") }
                #expect(throws: JSONParser.SyntaxError.self, "0.\(digits)\(byte)") { try JSONParser.parse("[0." + digits + String(byte) + "]") }
            }
        }
        for text in texts {
            // Also inside an array, where bytes other than digits follow within eight.
            let member = try JSONParser.parse("[" + text + ",7]")
            #expect(member == .array([try JSONParser.parse(text), .int(7)]), "\(text)")
            let parsed = try JSONParser.parse(text)
            if let integer = Int(text) {
                #expect(parsed == .int(integer), "\(text)")
            } else {
                let expected = try #require(Double(text))
                #expect(parsed.doubleValue?.bitPattern == expected.bitPattern, "\(text)")
            }
        }
    }
}
