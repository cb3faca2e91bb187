import Foundation

/// CPU time and memory of a running process, from /proc: for the benchmark and the resilience suite.
public struct ProcessProbe: Sendable {
    public let pid: Int32

    public init(pid: Int32) { self.pid = pid }

    /// User + system CPU seconds so far.
    public var cpuSeconds: Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the command: state is field 3; utime 14 and stime 15 are at offsets 11 and 12 here.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Resident memory in MiB: now, at its peak, and now split into the process's own pages (heap, stacks) and pages
    /// of mapped files (the executable and shared libraries, shared with other processes and reclaimable).
    public struct Memory: Sendable {
        public let rss, peak, anonymous, file: Double
    }

    public var memory: Memory {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return Memory(rss: 0, peak: 0, anonymous: 0, file: 0) }
        func value(_ key: String) -> Double {
            let line = status.split(separator: "\n").first { $0.hasPrefix(key + ":") } ?? ""
            return (Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) / 1024
        }
        return Memory(rss: value("VmRSS"), peak: value("VmHWM"), anonymous: value("RssAnon"), file: value("RssFile"))
    }
}
