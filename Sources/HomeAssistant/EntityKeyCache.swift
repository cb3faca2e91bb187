/// Where the store keeps an entity, remembered by the bytes of its id as a frame carries them: a frame's diff finds
/// its entity without making a `String` of the id and hashing that with SipHash (~700 instructions a change).
///
/// Direct-mapped: one slot per hash value, holding the last id seen there (up to `longestKey` bytes, copied into one
/// flat buffer, so a lookup retains nothing). A miss — an id not seen yet, a longer one, or two ids sharing a slot —
/// is looked up the usual way and remembered, whether the store keeps the entity or not (with a domain selection
/// most are not kept). The hash is seeded per cache: ids are Home Assistant's, outside text, and ids made to share
/// slots cost misses only: the dictionary's own lookup, as before, and a copy of the id. Emptied whenever the store's keys change,
/// since a dictionary's indices are then stale.
struct EntityKeyCache<Index>: Sendable where Index: Sendable {
    enum Lookup {
        case kept(Index)
        case notKept
        case unknown
    }

    private struct Slot: Sendable {
        /// 0: empty.
        var length: UInt8 = 0
        var index: Index?
    }

    static var slotCount: Int { 1_024 }
    static var longestKey: Int { 64 }

    private var slots: [Slot] = Array(repeating: Slot(), count: slotCount)
    private var keys: [UInt8] = Array(repeating: 0, count: slotCount * longestKey)
    private let seed: UInt64

    init(seed: UInt64 = .random(in: .min ... .max)) {
        self.seed = seed
    }

    func lookup(_ key: UnsafeBufferPointer<UInt8>) -> Lookup {
        guard key.count > 0, key.count <= Self.longestKey else { return .unknown }
        let slot = Self.slot(of: key, seed: seed)
        return slots.withUnsafeBufferPointer { slots in
            guard Int(slots[slot].length) == key.count else { return .unknown }
            let same = keys.withUnsafeBytes { keys in
                Self.equal(UnsafeRawBufferPointer(rebasing: keys[slot * Self.longestKey ..< slot * Self.longestKey + key.count]),
                           UnsafeRawBufferPointer(key))
            }
            guard same else { return .unknown }
            return slots[slot].index.map { .kept($0) } ?? .notKept
        }
    }

    /// Remembers where the entity with id `key` is (nil: not kept).
    mutating func remember(_ key: UnsafeBufferPointer<UInt8>, _ index: Index?) {
        guard key.count > 0, key.count <= Self.longestKey else { return }
        let slot = Self.slot(of: key, seed: seed)
        slots[slot] = Slot(length: UInt8(key.count), index: index)
        keys.withUnsafeMutableBytes { keys in
            UnsafeMutableRawBufferPointer(rebasing: keys[slot * Self.longestKey ..< slot * Self.longestKey + key.count])
                .copyMemory(from: UnsafeRawBufferPointer(key))
        }
    }

    /// Forgets everything (the store's keys changed): a slot of length 0 is empty, whatever index it still holds.
    mutating func removeAll() {
        slots.withUnsafeMutableBufferPointer { slots in
            for slot in slots.indices { slots[slot].length = 0 }
        }
    }

    /// Eight bytes at a time, the last eight overlapping the ones before (a key of eight bytes or more).
    static func slot(of key: UnsafeBufferPointer<UInt8>, seed: UInt64) -> Int {
        let bytes = UnsafeRawBufferPointer(key)
        var hash = seed ^ (UInt64(bytes.count) &* 0x9E37_79B9_7F4A_7C15)
        if bytes.count >= 8 {
            var offset = 0
            while offset + 8 < bytes.count {
                hash = mix(hash ^ bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                offset += 8
            }
            hash = mix(hash ^ bytes.loadUnaligned(fromByteOffset: bytes.count - 8, as: UInt64.self))
        } else {
            var word: UInt64 = 0
            for offset in 0..<bytes.count { word |= UInt64(bytes[offset]) << (8 * UInt64(offset)) }
            hash = mix(hash ^ word)
        }
        return Int(truncatingIfNeeded: hash >> 54)  // 10 bits: 1,024 slots
    }

    private static func mix(_ value: UInt64) -> UInt64 {
        var mixed = value &* 0xBF58_476D_1CE4_E5B9
        mixed ^= mixed >> 31
        return mixed &* 0x94D0_49BB_1331_11EB
    }

    private static func equal(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        if a.count < 8 {
            for offset in 0..<a.count where a[offset] != b[offset] { return false }
            return true
        }
        var offset = 0
        while offset + 8 < a.count {
            guard a.loadUnaligned(fromByteOffset: offset, as: UInt64.self) == b.loadUnaligned(fromByteOffset: offset, as: UInt64.self) else { return false }
            offset += 8
        }
        return a.loadUnaligned(fromByteOffset: a.count - 8, as: UInt64.self) == b.loadUnaligned(fromByteOffset: b.count - 8, as: UInt64.self)
    }
}
