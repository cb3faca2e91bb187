import Glibc
import Platform
import Testing

/// The back-off reconnecting and retrying share, the duration conversions and the write loop.
struct BackOffTests {
    @Test func theCeilingDoublesToItsCapAndTheDelayLiesInItsUpperHalf() {
        let backOff = BackOff(initial: .seconds(1), maximum: .seconds(60))
        #expect((0...7).map { backOff.ceiling(attempt: $0) } == [1, 2, 4, 8, 16, 32, 60, 60].map { Duration.seconds($0) })
        #expect(backOff.ceiling(attempt: 1_000) == .seconds(60))
        #expect(backOff.delay(attempt: 3, random: 0) == .seconds(4))
        #expect(backOff.delay(attempt: 3, random: 0.5) == .seconds(6))
        // Out-of-range randomness is clamped, never a longer or negative wait.
        #expect(backOff.delay(attempt: 3, random: 7) == .seconds(8))
        #expect(backOff.delay(attempt: 3, random: -1) == .seconds(4))
    }

    @Test func durationsConvertTowardZero() {
        #expect(Duration.milliseconds(1_500).wholeMilliseconds == 1_500)
        #expect(Duration.nanoseconds(1_999_999).wholeMilliseconds == 1)
        #expect(Duration.nanoseconds(2_500).wholeMicroseconds == 2)
        #expect(Duration.milliseconds(-1_500).wholeMilliseconds == -1_500)
        #expect(Duration.milliseconds(250).secondsValue == 0.25)
    }

    @Test func everyByteIsWrittenAndAFailureGivesItsErrno() {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let text = Array(repeating: UInt8(ascii: "x"), count: 10_000)
        #expect(text.withUnsafeBytes { writeAll(ends[1], $0) } == nil)
        var read = [UInt8](repeating: 0, count: 20_000), total = 0
        close(ends[1])
        while true {
            let n = read.withUnsafeMutableBytes { Glibc.read(ends[0], $0.baseAddress! + total, $0.count - total) }
            if n <= 0 { break }
            total += n
        }
        close(ends[0])
        #expect(total == 10_000)
        #expect(text.withUnsafeBytes { writeAll(-1, $0) } == EBADF)
    }
}
