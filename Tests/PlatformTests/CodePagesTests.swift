import Foundation
import Glibc
@testable import Platform
import Testing

/// Written before the release and read after: a data page must keep what was written to it.
nonisolated(unsafe) private var writtenBeforeTheRelease = [1, 2, 3]

/// Letting go of the start-up's code pages: only executable file mappings, and they come back when called.
struct CodePagesTests {
    @Test(arguments: [
        ("55d0c0a00000-55d0c1e00000 r-xp 00280000 fe:00 5342147   /usr/bin/livebridge", 0x55d0_c0a0_0000 as UInt?),
        ("7f3a1c000000-7f3a1c200000 r-xp 00000000 08:01 131    /usr/lib/x86_64-linux-gnu/lib with space.so", 0x7f3a_1c00_0000),
        ("7ffd5a1f0000-7ffd5a1f2000 r-xp 00000000 00:00 0                          [vdso]", nil),
        ("7f3a1c000000-7f3a1c200000 r--p 00000000 08:01 131    /usr/lib/libc.so.6", nil),
        ("7f3a1c000000-7f3a1c200000 rw-p 00000000 08:01 131    /usr/lib/libc.so.6", nil),
        ("7f3a1c000000-7f3a1c200000 rwxp 00000000 08:01 131    /tmp/jit", nil),
        ("7f3a1c000000-7f3a1c200000 r-xp 00000000 00:00 0", nil),
        ("7f3a1c200000-7f3a1c000000 r-xp 00000000 08:01 131    /usr/lib/libc.so.6", nil),
        ("7F3A1C000000-7f3a1c200000 r-xp 00000000 08:01 131    /usr/lib/libc.so.6", nil),
        ("7f3a1c000000 r-xp 00000000 08:01 131    /usr/lib/libc.so.6", nil),
        ("1-2-3 r-xp 0 0 0 /x", nil),
        ("12345678901234567-12345678901234568 r-xp 0 0 0 /x", nil),
        ("", nil),
    ])
    func onlyExecutableFileMappingsAreChosen(line: String, start: UInt?) {
        #expect(CodePages.executableFileMapping(ArraySlice(line.utf8))?.lowerBound == start)
    }

    /// A debugger's breakpoints live in code pages: nothing is let go while /proc/self/status names a tracer.
    @Test(arguments: [("Name:\tx\nTracerPid:\t0\nUid:\t0\n", false), ("TracerPid:\t4121\n", true), ("TracerPid:\t10", true),
                      ("Name:\tx\n", false), ("", false)])
    func aTracerIsSeenInTheStatus(status: String, traced: Bool) {
        #expect(CodePages.namesTracer(Array(status.utf8)) == traced)
    }

    @Test func thisProcessIsNotTraced() {
        #expect(!CodePages.isTraced())
    }

    @Test func residentCodeShrinksAndStillRuns() throws {
        writtenBeforeTheRelease.append(4)
        let before = try residentCodeKiB()
        let released = CodePages.release()
        let after = try residentCodeKiB()
        #expect(released > 0)
        #expect(after < before, "resident code \(before) KiB before, \(after) KiB after")
        // Code called after the release maps back in; data written before is kept.
        #expect(PathText.join("/etc", "x") == "/etc/x")
        #expect(writtenBeforeTheRelease == [1, 2, 3, 4])
    }

    /// The resident KiB of the process's executable file mappings, from /proc/self/smaps.
    private func residentCodeKiB() throws -> Int {
        // Read to the end a page at a time: /proc's files say size 0, and a sanitizer's process has many mappings.
        var bytes: [UInt8] = []
        let descriptor = open("/proc/self/smaps", O_RDONLY)
        guard descriptor >= 0 else { throw CocoaError(.fileReadNoSuchFile) }
        defer { close(descriptor) }
        var page = [UInt8](repeating: 0, count: 1 << 16)
        while case let count = read(descriptor, &page, page.count), count > 0 { bytes += page[..<count] }
        let smaps = String(decoding: bytes, as: UTF8.self)
        var total = 0, inCode = false
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if fields.count >= 5, fields[0].contains("-"), !fields[0].hasSuffix(":") {
                inCode = fields[1] == "r-xp" && fields.count >= 6 && fields[5].hasPrefix("/")
            } else if inCode, fields.first == "Rss:", fields.count >= 2, let kib = Int(fields[1]) {
                total += kib
            }
        }
        return total
    }
}
