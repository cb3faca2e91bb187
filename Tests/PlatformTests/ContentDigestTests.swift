import Platform
import Testing

/// The digest of a delivered body, saved in state.json: FNV-1a 64 as 16 lowercase hex digits, zero-padded; a
/// saved digest from an earlier version must still compare equal.
struct ContentDigestTests {
    @Test func publishedVectorsAndPadding() {
        // FNV-1a 64 test vectors (the FNV authors' table).
        #expect(ContentDigest.of([]) == "cbf29ce484222325")
        #expect(ContentDigest.of(Array("a".utf8)) == "af63dc4c8601ec8c")
        #expect(ContentDigest.of(Array("foobar".utf8)) == "85944171f73967e8")
        // As it was written before (String(radix:) padded to 16): equal for hashes with leading zero digits too.
        for n in 0..<4_000 {
            let bytes = Array("body \(n)".utf8)
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            let hex = String(hash, radix: 16)
            #expect(ContentDigest.of(bytes) == String(repeating: "0", count: 16 - hex.count) + hex)
        }
    }
}
