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

    /// A thread that blocks SIGTERM (as a daemon's signal handling does) spawns a child that still dies of its own.
    @Test func theChildStartsWithNoSignalBlocked() async throws {
        let status = await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
            Thread.detachNewThread {
                var blocked = sigset_t()
                sigemptyset(&blocked)
                sigaddset(&blocked, SIGTERM)
                pthread_sigmask(SIG_BLOCK, &blocked, nil)
                let status = (try? ChildProcess.run("/bin/sh", ["-c", "kill -TERM $$; exit 0"]).status) ?? -2
                continuation.resume(returning: status)
            }
        }
        #expect(status == SIGTERM)
    }

    /// Children spawned while other threads spawn with pipes hold none of their pipes (nor anything else).
    @Test func childrenSpawnedAtOnceHoldOnlyTheirOwnStreams() async throws {
        let all = await withTaskGroup(of: [ChildProcess].self) { group in
            for thread in 0..<4 {
                group.addTask {
                    var sleepers: [ChildProcess] = []
                    for n in 0..<25 {
                        if (n + thread) % 5 == 0, let sleeper = try? ChildProcess("/bin/sleep", ["30"]) {
                            sleepers.append(sleeper)
                        } else {
                            _ = try? ChildProcess.run("/bin/echo", ["x"])
                        }
                    }
                    return sleepers
                }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
        #expect(all.count == 20)
        for sleeper in all {
            let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(sleeper.pid)/fd")) ?? []
            #expect(descriptors.sorted() == ["0", "1", "2"], "\(descriptors)")
            sleeper.signal(SIGKILL)
            #expect(sleeper.wait() == SIGKILL)
        }
    }

    @Test func aFileThatCannotBeOpenedIsNamedAndAPipedInputIsClosedByRun() throws {
        do {
            _ = try ChildProcess.run("/bin/cat", [], standardInput: .file("/nonexistent/input"))
            Issue.record("a missing input file was accepted")
        } catch {
            #expect("\(error)".contains("/nonexistent/input: No such file or directory"), "\(error)")
        }
        // cat reads its input to the end: with the pipe's write end left open it would wait for ever.
        #expect(try ChildProcess.run("/bin/cat", [], standardInput: .pipe).status == 0)
    }

    /// A FIFO nobody reads: refused at once, naming it (the child's open had held the parent in posix_spawn).
    @Test func aFIFOWithNoReaderIsRefusedAtOnce() throws {
        let fifo = FileManager.default.temporaryDirectory.appendingPathComponent("child-fifo-\(UUID().uuidString)").path
        #expect(mkfifo(fifo, 0o600) == 0)
        defer { unlink(fifo) }
        do {
            _ = try ChildProcess("/bin/true", [], standardOutput: .file(fifo))
            Issue.record("output to a FIFO with no reader was accepted")
        } catch {
            #expect("\(error)".contains("\(fifo): No such device or address"), "\(error)")
        }
    }

    @Test func statusIfExitedDoesNotWaitForAnotherWaiter() async throws {
        let child = try ChildProcess("/bin/sleep", ["30"])
        let waiter = Task.detached { child.wait() }
        #expect(child.statusIfExited() == nil)
        child.signal(SIGKILL)
        #expect(await waiter.value == SIGKILL)
        #expect(child.statusIfExited() == SIGKILL)
    }

    /// Output and error to one file: both kept, in order (opened twice, each wrote over the other).
    @Test func outputAndErrorToOneFileKeepBoth() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("child-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        // The same file spelled two ways.
        let child = try ChildProcess("/bin/sh", ["-c", "echo out1; echo err1 >&2; echo out2"],
                                     standardOutput: .file(file), standardError: .file(file.replacingOccurrences(of: "/child-", with: "/./child-")))
        #expect(child.wait() == 0)
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "out1\nerr1\nout2\n")
        for (path, reason) in [("/nonexistent/folder/out", "No such file or directory"), ("/tmp", "Is a directory")] {
            do {
                _ = try ChildProcess("/bin/true", [], standardOutput: .file(path))
                Issue.record("output to \(path) was accepted")
            } catch {
                #expect("\(error)".contains("\(path): \(reason)"), "\(error)")
            }
        }
    }
}
