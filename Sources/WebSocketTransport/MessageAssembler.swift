/// Joins the fragments and chunks of one WebSocket message, up to a size cap.
///
/// libwebsockets hands a large message over in rx-buffer-sized pieces; the message is whole when
/// the final fragment has no payload left. Over the cap the partial message is released at once,
/// so memory stays bounded whatever the peer sends.
public struct MessageAssembler: Sendable {
    public enum Outcome: Equatable, Sendable {
        case incomplete
        case complete([UInt8])
        /// The message grew past the cap; `size` is how much had arrived when it was dropped.
        case tooLarge(size: Int)
    }

    public let maximumSize: Int
    private var buffer: [UInt8] = []

    public init(maximumSize: Int) {
        self.maximumSize = maximumSize
    }

    /// Bytes held for the message being assembled.
    public var pendingCount: Int { buffer.count }

    public mutating func append(_ chunk: UnsafeRawBufferPointer, isLast: Bool) -> Outcome {
        guard buffer.count + chunk.count <= maximumSize else {
            let size = buffer.count + chunk.count
            buffer = []
            return .tooLarge(size: size)
        }
        if isLast && buffer.isEmpty {
            return .complete(Array(chunk))
        }
        buffer.append(contentsOf: chunk)
        guard isLast else { return .incomplete }
        defer { buffer = [] }
        return .complete(buffer)
    }

    public mutating func reset() { buffer = [] }
}
