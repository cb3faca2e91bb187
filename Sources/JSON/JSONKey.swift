/// An object member's key as `JSONReader.readMembers` hands it over: the key's checked bytes in the text, valid only
/// inside that call, compared with the names a reader expects without making a String.
public struct JSONKey {
    /// The bytes between the quotes, when the key has no escapes (nearly always).
    @usableFromInline let text: UnsafeBufferPointer<UInt8>?
    /// The decoded key, when it has escapes.
    @usableFromInline let decoded: String?

    init(text: UnsafeBufferPointer<UInt8>) {
        self.text = text
        decoded = nil
    }

    init(decoded: String) {
        text = nil
        self.decoded = decoded
    }

    /// The bytes between the quotes, for a key without escapes (nil for one with): valid only during the read that
    /// gave the key. For a table that finds a key by its bytes without making a String of it.
    public var unescapedBytes: UnsafeBufferPointer<UInt8>? { text }

    /// The key as a String (for a key that is data, such as an entity id).
    public var string: String {
        if let text { return String(decoding: text, as: UTF8.self) }
        return decoded!
    }

    @inlinable
    public static func == (key: JSONKey, name: StaticString) -> Bool {
        guard let text = key.text else { return key.decoded! == name.description }
        guard text.count == name.utf8CodeUnitCount else { return false }
        let expected = name.utf8Start
        for offset in 0..<text.count where text[offset] != expected[offset] { return false }
        return true
    }

    /// For `switch key { case "id": … }`.
    @inlinable
    public static func ~= (name: StaticString, key: JSONKey) -> Bool { key == name }
}
