import Dispatcher
import Foundation
import Testing

struct DeliveryStateFileTests {
    func folder() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-state-\(UUID().uuidString)").path
    }

    @Test func whatIsSavedLoadsBack() throws {
        let file = try DeliveryStateFile(directory: folder())
        let state = DeliveryState(entries: [
            DeliveryState.key(activity: "washer", target: "aivi"): .init(running: true, digest: DeliveryState.digest(Array("{}".utf8))),
            DeliveryState.key(activity: "dryer", target: "pulse"): .init(running: false, digest: nil),
        ])
        try file.save(state)
        var warnings: [String] = []
        #expect(file.load { warnings.append($0) } == state)
        #expect(warnings.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: file.directory + "/.state.json.tmp"))
    }

    @Test func aMissingFileIsACleanStartWithoutWarning() throws {
        let file = try DeliveryStateFile(directory: folder())
        var warnings: [String] = []
        #expect(file.load { warnings.append($0) } == DeliveryState())
        #expect(warnings.isEmpty)
    }

    @Test(arguments: ["", "{not json", "[1,2]", #"{"version":2,"activities":{}}"#])
    func aCorruptFileIsACleanStartWithAWarning(contents: String) throws {
        let file = try DeliveryStateFile(directory: folder())
        try contents.write(toFile: file.path, atomically: false, encoding: .utf8)
        var warnings: [String] = []
        #expect(file.load { warnings.append($0) } == DeliveryState())
        #expect(warnings == ["the state file \(file.path) is unreadable or corrupt; starting clean (activities already on phones get a fresh start)"])
    }

    @Test func anUnwritableDataDirectoryIsAClearErrorAtStartUp() throws {
        let directory = folder()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try "x".write(toFile: directory + "/file", atomically: true, encoding: .utf8)
        #expect(throws: DeliveryStateFile.FileError.self) { try DeliveryStateFile(directory: directory + "/file") }
        do { _ = try DeliveryStateFile(directory: directory + "/file") } catch {
            #expect("\(error)" == "the data directory \(directory)/file is not a directory")
        }
        guard getuid() != 0 else { return }  // root writes anywhere: the permission case needs an ordinary user.
        chmod(directory, 0o500)
        defer { chmod(directory, 0o700) }
        #expect(throws: DeliveryStateFile.FileError.self) { try DeliveryStateFile(directory: directory) }
    }

    @Test func digestsTellBodiesApart() {
        #expect(DeliveryState.digest(Array("a".utf8)) == "af63dc4c8601ec8c")
        #expect(DeliveryState.digest(Array("a".utf8)) != DeliveryState.digest(Array("b".utf8)))
    }
}
