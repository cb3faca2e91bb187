import JSON
import Testing

struct JSONParserTests {
    @Test func parsesEveryKindOfValue() throws {
        let value = try JSONParser.parse(#" {"s":"x","i":-12,"d":1.5e2,"t":true,"f":false,"n":null,"a":[1,[]],"o":{}} "#)
        #expect(value == ["s": "x", "i": -12, "d": 150.0, "t": true, "f": false, "n": nil, "a": [1, []], "o": [:]])
    }

    @Test func keepsIntegersApartFromFractions() throws {
        #expect(try JSONParser.parse("3") == .int(3))
        #expect(try JSONParser.parse("3.0") == .double(3.0))
        #expect(try JSONParser.parse("99999999999999999999") == .double(1e20))
    }

    @Test func decodesEscapesAndSurrogatePairs() throws {
        #expect(try JSONParser.parse(#""a\"b\\c\/\n\t\u00e9\ud83d\ude00""#) == .string("a\"b\\c/\n\té😀"))
    }

    /// A surrogate escape without its pair is U+FFFD (text from outside: one attribute must not refuse a message);
    /// a pair is its scalar, and the escape after a lone high surrogate is read on its own.
    @Test func readsASurrogateWithoutItsPairAsTheReplacementCharacter() throws {
        #expect(try JSONParser.parse(#""\ud800""#) == .string("\u{FFFD}"))
        #expect(try JSONParser.parse(#""a\udc00b""#) == .string("a\u{FFFD}b"))
        #expect(try JSONParser.parse(#""\ud800\u0041""#) == .string("\u{FFFD}A"))
        #expect(try JSONParser.parse(#""\ud800\ud83d\ude00""#) == .string("\u{FFFD}😀"))
        #expect(try JSONParser.parse(#""\udbff\udfff""#) == .string("\u{10FFFF}"))
        #expect(try JSONParser.parse(#"{"\ud800": "\udfff"}"#) == .object(["\u{FFFD}": .string("\u{FFFD}")]))
        #expect(throws: JSONParser.SyntaxError.self) { try JSONParser.parse(#""\ud800\u12g4""#) }
        #expect(throws: JSONParser.SyntaxError.self) { try JSONParser.parse(#""\ud800\u""#) }
    }

    @Test func rejectsMalformedInputWithTheOffset() {
        let cases: [(String, Int)] = [("{\"a\":", 5), ("[1,]", 3), ("tru", 0), ("01", 1), ("\"\\u12g4\"", 5), ("{\"a\" 1}", 5), ("1 2", 2)]
        for (text, offset) in cases {
            #expect(throws: JSONParser.SyntaxError.self, "\(text)") { try JSONParser.parse(text) }
            do { _ = try JSONParser.parse(text) } catch let error as JSONParser.SyntaxError {
                #expect(error.offset == offset, "\(text): \(error)")
            } catch {}
        }
    }

    @Test func rejectsNestingDeeperThanTheLimit() {
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        #expect(throws: JSONParser.SyntaxError.self) { try JSONParser.parse(deep) }
    }

    @Test func encodingSortsKeysAndEscapes() throws {
        let value: JSONValue = ["b": "q\"\n\u{01}", "a": [1, 2.5, nil, true]]
        #expect(value.jsonText == #"{"a":[1,2.5,null,true],"b":"q\"\n\u0001"}"#)
        #expect(try JSONParser.parse(value.jsonText) == value)
    }
}
