import Dispatcher
import Foundation

import Testing

/// The data directory's guards: one daemon per directory, a state file never written through a planted link,
/// secrets readable by others warned about.
struct DataDirectoryTests {
    func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-data-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func aSecondHolderOfTheDirectoryIsRefusedWithThePid() throws {
        let directory = try folder()
        var first: DataDirectoryLock? = try DataDirectoryLock(directory: directory)
        do {
            _ = try DataDirectoryLock(directory: directory)
            Issue.record("two locks on one directory")
        } catch let error as DataDirectoryLock.HeldError {
            #expect(error.description == "another LiveBridge (pid \(getpid())) is running with the data directory \(directory); stop it, or give this one its own --data-dir")
        }
        withExtendedLifetime(first) {}
        first = nil
        _ = try DataDirectoryLock(directory: directory)  // released with its holder
    }

    @Test func aLinkPlantedAtTheTemporaryNameIsNotWrittenThrough() throws {
        let directory = try folder()
        let target = directory + "/elsewhere"
        try "keep".write(toFile: target, atomically: false, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: directory + "/.state.json.tmp", withDestinationPath: target)
        let file = try DeliveryStateFile(directory: directory)
        try file.save(DeliveryState())
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "keep")
        #expect(file.load { _ in } == DeliveryState())
    }

    @Test func aTemporaryFileLeftByACrashIsReplaced() throws {
        let directory = try folder()
        try "half-written".write(toFile: directory + "/.state.json.tmp", atomically: false, encoding: .utf8)
        let file = try DeliveryStateFile(directory: directory)
        try file.save(DeliveryState())
        #expect(!FileManager.default.fileExists(atPath: directory + "/.state.json.tmp"))
    }
}
