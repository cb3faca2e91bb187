import Testing
import WebSocketTransport

struct MessageAssemblerTests {
    func append(_ assembler: inout MessageAssembler, _ text: String, last: Bool) -> MessageAssembler.Outcome {
        Array(text.utf8).withUnsafeBytes { assembler.append($0, isLast: last) }
    }

    @Test func joinsChunksIntoOneMessage() {
        var assembler = MessageAssembler(maximumSize: 100)
        #expect(append(&assembler, "{\"a\":", last: false) == .incomplete)
        #expect(append(&assembler, "1}", last: true) == .complete(Array("{\"a\":1}".utf8)))
        #expect(assembler.pendingCount == 0)
    }

    @Test func overTheCapTheMessageIsDroppedAndMemoryReleased() {
        var assembler = MessageAssembler(maximumSize: 8)
        #expect(append(&assembler, "12345", last: false) == .incomplete)
        #expect(append(&assembler, "6789", last: false) == .tooLarge(size: 9))
        #expect(assembler.pendingCount == 0)
        #expect(append(&assembler, "ok", last: true) == .complete(Array("ok".utf8)))
    }
}
