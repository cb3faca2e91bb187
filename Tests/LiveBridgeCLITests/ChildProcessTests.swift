import Foundation
import ProcessMeasurement
import Testing

/// The tests' own spawner (`ChildProcess`): statuses as `Process` gave them, streams kept apart, nothing else inherited.
@Suite struct ChildProcessTests {
    @Test func anExitCodeAndASignalAreTheStatus() throws {
        #expect(try ChildProcess.run("/bin/sh", ["-c", "exit 3"]).status == 3)
        #expect(try ChildProcess.run("/bin/sh", ["-c", "kill -9 $$"]).status == 9)
        #expect(try ChildProcess.run("/bin/true", []).status == 0)
    }

    @Test func outputAndErrorsAreCollectedApartAndInputComesFromTheFile() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("child-\(UUID().uuidString)").path
        try String(repeating: "line\n", count: 20_000).write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        // 100 kB each way at once: reading one stream to its end before the other would stall on a full pipe.
        let run = try ChildProcess.run("/bin/sh", ["-c", "cat; cat \"$0\" >&2; echo \"$ONLY\"", file],
                                       environment: ["ONLY": "this"], standardInput: .file(file))
        #expect(run.status == 0)
        #expect(run.output.count == 100_000 + 5 && String(decoding: run.output.suffix(5), as: UTF8.self) == "this\n")
        #expect(run.errors.count == 100_000)
    }

    @Test func theChildHasOnlyItsThreeStreams() throws {
        let inherited = open("/dev/null", O_RDONLY)  // not close-on-exec
        defer { close(inherited) }
        let run = try ChildProcess.run("/bin/ls", ["/proc/self/fd"])
        let descriptors = String(decoding: run.output, as: UTF8.self).split(separator: "\n").compactMap { Int32($0) }
        #expect(!descriptors.contains(inherited), "\(descriptors)")
        #expect(descriptors.filter { $0 > 3 }.isEmpty, "\(descriptors)")  // 3: ls's own listing of the folder
    }

    @Test func aMissingProgramIsAnErrorNamingIt() {
        #expect(throws: ChildProcess.SpawnError.self) { try ChildProcess("/nonexistent/program", []) }
        do { _ = try ChildProcess("/nonexistent/program", []) } catch { #expect("\(error)".contains("/nonexistent/program")) }
    }

    @Test func signalAfterReapingDoesNothingAndWaitAnswersAgain() throws {
        let child = try ChildProcess("/bin/sleep", ["30"])
        #expect(child.statusIfExited() == nil)
        child.signal(SIGTERM)
        #expect(child.wait() == SIGTERM)
        child.signal(SIGKILL)
        #expect(child.wait() == SIGTERM && child.statusIfExited() == SIGTERM)
    }
}
