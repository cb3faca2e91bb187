#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Lets go of the code pages the process has mapped so far, its own and its libraries', once the start-up is over.
///
/// Reading the rules, compiling templates and taking a snapshot of thousands of entities runs code that a following
/// daemon never runs again, and the kernel maps code 64 KiB around each page touched. Those pages stay in the
/// resident set for months. `MADV_DONTNEED` on a read-only, executable file mapping only removes the page-table
/// entries: the pages stay in the page cache (shared with any other process), and the next call into them maps them
/// again from there. The same idea as the kernel freeing its init sections after boot, without the freeing.
///
/// Only `r-xp` mappings of files are touched. Those pages were never written, so nothing but the mapping is lost;
/// data, relocated or not, is left alone.
public enum CodePages {
    /// The bytes of code mapping let go of (the mappings' sizes, not only what was resident).
    /// Nothing is let go while a debugger traces the process: its breakpoints are written into code pages, which
    /// would go with them.
    @discardableResult
    public static func release() -> Int {
        guard !isTraced(), let maps = contents(of: "/proc/self/maps") else { return 0 }
        var released = 0
        for line in maps.split(separator: UInt8(ascii: "\n")) {
            guard let range = executableFileMapping(line) else { continue }
            if madvise(UnsafeMutableRawPointer(bitPattern: range.lowerBound), Int(range.upperBound - range.lowerBound),
                       MADV_DONTNEED) == 0 {
                released += Int(range.upperBound - range.lowerBound)
            }
        }
        return released
    }

    /// The address range of a line of `/proc/self/maps` (`start-end perms offset dev inode path`) when it maps a file
    /// read-only and executable; nil for anything else, also a line that does not parse.
    static func executableFileMapping(_ line: ArraySlice<UInt8>) -> Range<UInt>? {
        let fields = line.split(separator: UInt8(ascii: " "), maxSplits: 5, omittingEmptySubsequences: true)
        guard fields.count == 6, fields[1].elementsEqual("r-xp".utf8),
              fields[5].first(where: { $0 != UInt8(ascii: " ") }) == UInt8(ascii: "/")  // not [vdso] or anonymous
        else { return nil }
        let bounds = fields[0].split(separator: UInt8(ascii: "-"))
        guard bounds.count == 2, let start = hexadecimal(bounds[0]), let end = hexadecimal(bounds[1]), start < end
        else { return nil }
        return start..<end
    }

    private static func hexadecimal(_ digits: ArraySlice<UInt8>) -> UInt? {
        guard !digits.isEmpty, digits.count <= 16 else { return nil }
        var value: UInt = 0
        for digit in digits {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = value << 4 | UInt(digit - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = value << 4 | UInt(digit - UInt8(ascii: "a") + 10)
            default: return nil
            }
        }
        return value
    }

    /// Whether `/proc/self/status` names a tracer.
    static func isTraced() -> Bool { contents(of: "/proc/self/status").map(namesTracer) ?? false }

    /// Whether a `/proc/PID/status` text has `TracerPid:` other than 0.
    static func namesTracer(_ status: [UInt8]) -> Bool {
        for line in status.split(separator: UInt8(ascii: "\n")) where line.starts(with: "TracerPid:".utf8) {
            return line.dropFirst(10).contains { $0 >= UInt8(ascii: "1") && $0 <= UInt8(ascii: "9") }
        }
        return false
    }

    /// A file of /proc, at most 4 MiB of it (a few hundred lines in practice); nil where there is none.
    private static func contents(of path: String) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var text: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while text.count < 4 << 20 {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            text.append(contentsOf: chunk[0..<count])
        }
        return text
    }
}
