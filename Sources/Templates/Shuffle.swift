import Glibc

/// Home Assistant's `shuffle(items, seed=…)`: with a seed, Python's `random.Random(seed).shuffle` — the Mersenne
/// Twister seeded as CPython seeds it (an int's 32-bit words; text as int.from_bytes(text + sha512(text))), then
/// Fisher–Yates drawing with `_randbelow` — so a seeded shuffle gives Home Assistant's order; without one, any order.
enum Shuffle {
    static func shuffle(_ args: [TemplateValue], seed keyword: TemplateValue?) throws(EvaluationError) -> TemplateValue {
        guard let first = args.first else { throw EvaluationError("shuffle expected at least 1 argument, got 0") }
        var items: [TemplateValue]
        var seed = keyword
        switch first {
        case .list(let list):
            items = list
            if args.count > 1, seed == nil || seed == TemplateValue.none { seed = args[1] }
        case .mapping(let members):
            items = members.keys.map(TemplateValue.string)
            if args.count > 1, seed == nil || seed == TemplateValue.none { seed = args[1] }
        default:
            guard args.count > 1 else { throw EvaluationError("'\(first.pythonTypeName)' object is not iterable") }
            items = args
        }
        guard let seed, seed != TemplateValue.none else { return .list(items.shuffled()) }
        var twister = MersenneTwister(key: try key(seed))
        var i = items.count - 1
        while i >= 1 {
            items.swapAt(i, twister.below(UInt32(i + 1)))
            i -= 1
        }
        return .list(items)
    }

    /// The seed as CPython's `init_by_array` key: the absolute value's 32-bit words, least significant first.
    static func key(_ seed: TemplateValue) throws(EvaluationError) -> [UInt32] {
        switch seed {
        case .int(let n): return words(of: n.magnitude)
        case .bool(let b): return [b ? 1 : 0]
        case .double(let d) where !d.isNaN:
            // CPython seeds a float with hash(x), taken as an unsigned 64-bit number.
            return words(of: UInt(bitPattern: Int(pythonHash(d))))
        case .string(let text):
            let bytes = Array(text.utf8) + Digests.sha512(Array(text.utf8))
            // int.from_bytes(…, "big"): the last byte is the least significant.
            var out: [UInt32] = []
            var index = bytes.count
            while index > 0 {
                var word: UInt32 = 0
                for b in bytes[max(0, index - 4)..<index] { word = word << 8 | UInt32(b) }
                out.append(word)
                index -= 4
            }
            while out.count > 1, out.last == 0 { out.removeLast() }
            return out
        default:
            throw EvaluationError("shuffle's seed must be a whole number or text, got \(seed.typeName) \(seed.repr)")
        }
    }

    /// Python's hash of a float (Objects/object.c `_Py_HashDouble`): its value modulo the Mersenne prime 2^61 − 1,
    /// with its sign; ±inf hash to ±314159 and -1 becomes -2.
    static func pythonHash(_ v: Double) -> Int64 {
        let p: UInt64 = (1 << 61) - 1
        if v.isInfinite { return v > 0 ? 314_159 : -314_159 }
        // Swift's frexp gives the magnitude's mantissa: the sign is taken apart here.
        let sign: Int64 = v < 0 ? -1 : 1
        var (m, e) = Glibc.frexp(Swift.abs(v))
        var x: UInt64 = 0
        while m != 0 {
            x = ((x << 28) & p) | x >> (61 - 28)
            m *= 268_435_456.0
            e -= 28
            let y = UInt64(m)
            m -= Double(y)
            x += y
            if x >= p { x -= p }
        }
        e = e >= 0 ? e % 61 : 61 - 1 - ((-1 - e) % 61)
        x = ((x << UInt64(e)) & p) | x >> UInt64(61 - e)
        var h = Int64(x) * sign
        if h == -1 { h = -2 }
        return h
    }

    static func words(of n: UInt) -> [UInt32] {
        let low = UInt32(truncatingIfNeeded: n), high = UInt32(truncatingIfNeeded: n >> 32)
        return high == 0 ? [low] : [low, high]
    }
}

/// MT19937 as CPython's _randommodule.c: init_by_array, genrand_uint32 and the draws `shuffle` makes.
struct MersenneTwister {
    private var state = [UInt32](repeating: 0, count: 624)
    private var index = 624

    init(key: [UInt32]) {
        state[0] = 19_650_218
        for i in 1..<624 { state[i] = 1_812_433_253 &* (state[i - 1] ^ (state[i - 1] >> 30)) &+ UInt32(i) }
        var i = 1, j = 0
        for _ in 0..<max(624, key.count) {
            state[i] = (state[i] ^ ((state[i - 1] ^ (state[i - 1] >> 30)) &* 1_664_525)) &+ key[j] &+ UInt32(j)
            i += 1; j += 1
            if i >= 624 { state[0] = state[623]; i = 1 }
            if j >= key.count { j = 0 }
        }
        for _ in 0..<623 {
            state[i] = (state[i] ^ ((state[i - 1] ^ (state[i - 1] >> 30)) &* 1_566_083_941)) &- UInt32(i)
            i += 1
            if i >= 624 { state[0] = state[623]; i = 1 }
        }
        state[0] = 0x8000_0000
    }

    mutating func next() -> UInt32 {
        if index >= 624 {
            for k in 0..<624 {
                let y = (state[k] & 0x8000_0000) | (state[(k + 1) % 624] & 0x7fff_ffff)
                state[k] = state[(k + 397) % 624] ^ (y >> 1) ^ (y & 1 == 0 ? 0 : 0x9908_b0df)
            }
            index = 0
        }
        var y = state[index]
        index += 1
        y ^= y >> 11
        y ^= (y << 7) & 0x9d2c_5680
        y ^= (y << 15) & 0xefc6_0000
        y ^= y >> 18
        return y
    }

    /// `_randbelow_with_getrandbits(n)`: k = n.bit_length() bits drawn (getrandbits: the top k of a word) until below n.
    mutating func below(_ n: UInt32) -> Int {
        let k = 32 - n.leadingZeroBitCount
        while true {
            let r = next() >> UInt32(32 - k)
            if r < n { return Int(r) }
        }
    }
}
