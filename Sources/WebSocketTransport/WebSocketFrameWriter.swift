/// A client's WebSocket frames (RFC 6455 §5.2): every frame a client sends is masked with a key of its own.
enum WebSocketFrameWriter {
    enum Opcode: UInt8 {
        case continuation = 0x0, text = 0x1, binary = 0x2, close = 0x8, ping = 0x9, pong = 0xA
    }

    /// One frame of `payload`, masked with `mask`, appended to `out`.
    static func append<Payload: Collection<UInt8>>(_ opcode: Opcode, isFinal: Bool = true, payload: Payload,
                                                     mask: UInt32, to out: inout [UInt8]) {
        let count = payload.count
        out.reserveCapacity(out.count + count + 14)
        out.append((isFinal ? 0x80 : 0) | opcode.rawValue)
        switch count {
        case ..<126:
            out.append(0x80 | UInt8(count))
        case ..<65536:
            out.append(0x80 | 126)
            out.append(UInt8(count >> 8))
            out.append(UInt8(count & 0xFF))
        default:
            out.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((UInt64(count) >> UInt64(shift)) & 0xFF)) }
        }
        let key = [UInt8(mask >> 24), UInt8((mask >> 16) & 0xFF), UInt8((mask >> 8) & 0xFF), UInt8(mask & 0xFF)]
        out.append(contentsOf: key)
        var index = 0
        for byte in payload {
            out.append(byte ^ key[index & 3])
            index += 1
        }
    }

    /// A close frame's payload: the code, then the reason cut to fit in 123 bytes at a character's edge.
    static func closePayload(code: UInt16, reason: String) -> [UInt8] {
        var payload = [UInt8(code >> 8), UInt8(code & 0xFF)]
        var reasonBytes: [UInt8] = []
        for scalar in reason.unicodeScalars {
            let bytes = Array(String(scalar).utf8)
            if reasonBytes.count + bytes.count > 123 { break }
            reasonBytes += bytes
        }
        payload += reasonBytes
        return payload
    }
}
