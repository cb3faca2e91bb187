import Foundation
import Rules
import Testing

/// The test process's folders live under one parent, removed when the process exits: a folder value's lifetime may
/// end at its last use while paths made from it are still read, so it cannot remove itself.
private let configFolderParent = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-yaml-\(UUID().uuidString)").path
private let configFolderCleanup: Void = { atexit { try? FileManager.default.removeItem(atPath: configFolderParent) } }()

/// Files written to a fresh folder, so `!include` and `secrets.yaml` resolve as on a real system.
struct ConfigFolder {
    let path: String

    init(_ files: [String: String]) throws {
        _ = configFolderCleanup
        path = configFolderParent + "/" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        for (name, text) in files { try text.write(toFile: path + "/" + name, atomically: true, encoding: .utf8) }
    }

    func file(_ name: String) -> String { path + "/" + name }
}

struct YAMLLoaderTests {
    func load(_ text: String, files: [String: String] = [:], environment: [String: String] = [:]) throws -> (YAMLNode?, [ConfigError], ConfigFolder) {
        var all = files
        all["livebridge.yaml"] = text
        let folder = try ConfigFolder(all)
        var loader = YAMLLoader(environment: environment)
        let (node, errors) = loader.load(file: folder.file("livebridge.yaml"))
        return (node, errors, folder)
    }

    func mapping(_ node: YAMLNode?) -> [(key: YAMLNode, value: YAMLNode)] {
        if case .mapping(let entries)? = node?.kind { return entries }
        return []
    }

    @Test func everyNodeKnowsItsLineAndColumnAndScalarsKeepTheirText() throws {
        let (node, errors, folder) = try load("a: on\nlist:\n  - 'yes'\n  - 1.50\n")
        #expect(errors.isEmpty)
        let entries = mapping(node)
        #expect(entries.map { $0.key.scalar } == ["a", "list"])
        #expect(entries[0].value.scalar == "on")
        #expect(entries[0].value.location == SourceLocation(file: folder.file("livebridge.yaml"), line: 1, column: 4))
        guard case .sequence(let items) = entries[1].value.kind else { Issue.record("not a list"); return }
        #expect(items.map(\.scalar) == ["yes", "1.50"])
        #expect(items[1].location.line == 4 && items[1].location.column == 5)
        #expect(items[0].isPlain == false && items[1].isPlain == true)
    }

    /// systemd's `LoadCredential=`: a secret comes from the credential of its name (final newline dropped), then from a
    /// `secrets.yaml` credential, then from `secrets.yaml` beside the file; a miss names every place looked in.
    @Test func secretsComeFromSystemdCredentials() throws {
        let credentials = try ConfigFolder(["ha_token": "from-credential\n", "secrets.yaml": "aivi_token: from-credentials-yaml\n"])
        let environment = ["CREDENTIALS_DIRECTORY": credentials.path]
        let (node, errors, _) = try load("a: !secret ha_token\nb: !secret aivi_token\nc: !secret local\n",
                                         files: ["secrets.yaml": "local: beside\nha_token: shadowed\n"], environment: environment)
        #expect(errors.isEmpty)
        #expect(mapping(node).map(\.value.scalar) == ["from-credential", "from-credentials-yaml", "beside"])
        #expect(mapping(node).map(\.value.quoted) == ["!secret ha_token", "!secret aivi_token", "!secret local"])
        let (_, missing, folder) = try load("a: !secret nope\n", environment: environment)
        #expect(missing.map(\.description) == [
            "\(folder.file("livebridge.yaml")):1:4: !secret nope is not defined in \(credentials.file("secrets.yaml"))",
        ])
        let empty = try ConfigFolder([:])
        let (_, none, other) = try load("a: !secret nope\n", environment: ["CREDENTIALS_DIRECTORY": empty.path])
        #expect(none.map(\.description) == [
            "\(other.file("livebridge.yaml")):1:4: !secret nope: no secrets file at \(other.file("secrets.yaml")) and no credential nope in \(empty.path)",
        ])
    }

    /// A secrets file that is there but cannot be read says why, as the system does, and not that the secret is
    /// undefined.
    @Test func anUnreadableSecretsFileSaysWhy() throws {
        let folder = try ConfigFolder(["livebridge.yaml": "token: !secret ha_token\n"])
        try FileManager.default.createDirectory(atPath: folder.file("secrets.yaml"), withIntermediateDirectories: false)
        var loader = YAMLLoader(environment: [:])
        let (_, errors) = loader.load(file: folder.file("livebridge.yaml"))
        #expect(errors.map(\.message) == ["cannot read \(folder.file("secrets.yaml")): Is a directory"])
    }

    @Test func secretsComeFromSecretsYamlBesideTheFileAndAreMarkedSecret() throws {
        let (node, errors, _) = try load("token: !secret ha_token\n", files: ["secrets.yaml": "ha_token: abc123\n"])
        #expect(errors.isEmpty)
        let token = mapping(node)[0].value
        #expect(token.scalar == "abc123")
        #expect(token.isSecret)
        #expect(token.quoted == "!secret ha_token")
        #expect(token.location.line == 1 && token.location.column == 8)
    }

    @Test func aMissingSecretNamesItAndItsPlace() throws {
        let (_, errors, folder) = try load("a: 1\ntoken: !secret nope\n", files: ["secrets.yaml": "other: x\n"])
        #expect(errors.map(\.description) == ["\(folder.file("livebridge.yaml")):2:8: !secret nope is not defined in \(folder.file("secrets.yaml"))"])
    }

    @Test func envVarsWithDefaults() throws {
        let (node, errors, _) = try load("a: !env_var PULSE_ID\nb: !env_var MISSING fallback\n", environment: ["PULSE_ID": "p-1"])
        #expect(errors.isEmpty)
        #expect(mapping(node).map { $0.value.scalar } == ["p-1", "fallback"])
        let (_, missing, _) = try load("a: !env_var MISSING\n")
        #expect(missing.first?.message == "environment variable MISSING is not set and no default is given")
    }

    @Test func includeInsertsAnotherFileWithItsOwnPositions() throws {
        let (node, errors, folder) = try load("activities: !include activities.yaml\n", files: ["activities.yaml": "washer:\n  icon: washer\n"])
        #expect(errors.isEmpty)
        let washer = mapping(mapping(node)[0].value)[0]
        #expect(washer.key.scalar == "washer")
        #expect(mapping(washer.value)[0].value.location == SourceLocation(file: folder.file("activities.yaml"), line: 2, column: 9))
    }

    @Test func syntaxErrorsHaveLineAndColumn() throws {
        let (node, errors, folder) = try load("a: 1\nb: [1, 2\nc: 3\n")
        #expect(node == nil)
        #expect(errors.count == 1)
        #expect(errors.first?.location.file == folder.file("livebridge.yaml"))
        #expect(errors.first?.location.line == 3)
        #expect(errors.first?.message.hasPrefix("YAML syntax error") == true)
    }

    @Test func duplicateKeysAndUnknownTagsAreAllReported() throws {
        let (_, errors, _) = try load("a: 1\nb: !vault x\na: 2\n")
        #expect(errors.map { "\($0.location.line):\($0.location.column) \($0.message)" } == [
            "2:4 unknown tag !vault; supported: !secret, !env_var, !include",
            "3:1 duplicate key \"a\" (first at line 1)",
        ])
    }

    @Test func anIncludeCycleIsNamedAtTheIncludeThatCloses() throws {
        let (_, errors, folder) = try load("a: !include loop.yaml\n", files: ["loop.yaml": "b: !include loop.yaml\nc: !include loop.yaml\n"])
        #expect(errors.map { "\($0.location.file == folder.file("loop.yaml")) \($0.location.line):\($0.location.column) \($0.message)" } == [
            "true 1:4 !include loop.yaml is a cycle: loop.yaml → loop.yaml",
            "true 2:4 !include loop.yaml is a cycle: loop.yaml → loop.yaml",
        ])
    }

    @Test func aCycleThroughTheMainFileAndThreeIncludesPerFileEndsAtOnce() throws {
        let three = "x: !include b.yaml\ny: !include b.yaml\nz: !include b.yaml\n"
        let (_, errors, _) = try load("a: !include b.yaml\n", files: ["b.yaml": "p: !include c.yaml\nq: !include c.yaml\nr: !include livebridge.yaml\n", "c.yaml": three])
        #expect(Set(errors.map(\.message)) == ["!include b.yaml is a cycle: b.yaml → c.yaml → b.yaml",
                                              "!include livebridge.yaml is a cycle: livebridge.yaml → b.yaml → livebridge.yaml"])
    }

    @Test func includesAreCounted() throws {
        // A tree of includes without a cycle: 5 files each including the next 5 times is 5^5 loads.
        var files: [String: String] = [:]
        for level in 0..<5 { files["l\(level).yaml"] = (0..<5).map { "k\($0): !include l\(level + 1).yaml" }.joined(separator: "\n") }
        files["l5.yaml"] = "leaf: 1\n"
        let (_, errors, _) = try load("root: !include l0.yaml\n", files: files)
        #expect(errors.map(\.message) == ["more than 256 !include in one configuration"])
    }

    /// "Billion laughs": each line doubles the last ten times; 974 bytes that expand to a billion nodes.
    @Test func aliasesThatExpandBeyondTheBoundAreRefusedWithAPosition() throws {
        var text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
        for i in 1..<9 { text += "a\(i): &a\(i) [" + Array(repeating: "*a\(i - 1)", count: 10).joined(separator: ", ") + "]\n" }
        let (node, errors, _) = try load(text)
        #expect(node == nil)
        #expect(errors.map { "\($0.location.line):\($0.location.column) \($0.message)" } == ["5:45 aliases expand this file to more than 100000 nodes"])
    }

    /// The alias bound counts what aliases bring, not what is written: 12,000 activities without one alias load.
    @Test func aLargeFileWithoutAliasesIsNotRefused() throws {
        var text = "activities:\n"
        for i in 0..<12_000 { text += "  a\(i):\n    template: generic\n    title: \"Load \(i)\"\n    active_when: \"{{ true }}\"\n" }
        let (node, errors, _) = try load(text)
        #expect(errors.isEmpty && node != nil)
    }

    @Test func aFIFOOrAnOversizedIncludeIsRefusedNotRead() throws {
        let (_, _, folder) = try load("x: 1\n")
        let fifo = folder.file("pipe.yaml")
        #expect(mkfifo(fifo, 0o600) == 0)
        let (_, errors, _) = try load("x: !include \(fifo)\n")
        #expect(errors.map(\.message) == ["cannot read \(fifo): not a regular file"])
        let big = folder.file("big.yaml")
        #expect(FileManager.default.createFile(atPath: big, contents: Data(count: 17 << 20)))
        let (_, bigErrors, _) = try load("x: !include \(big)\n")
        #expect(bigErrors.map(\.message) == ["\(big) is 17825792 bytes; a rules file may be at most 16 MiB"])
    }

    @Test func aliasesWithinTheBoundResolve() throws {
        var text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
        for i in 1..<4 { text += "a\(i): &a\(i) [" + Array(repeating: "*a\(i - 1)", count: 10).joined(separator: ", ") + "]\n" }
        let (_, errors, _) = try load(text)
        #expect(errors.isEmpty)
    }

    @Test func nestingBeyond64IsRefused() throws {
        let (_, errors, _) = try load("a: " + String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000) + "\n")
        #expect(errors.map { "\($0.location.line):\($0.location.column) \($0.message)" } == ["1:67 lists and mappings nested more than 64 deep"])
    }

    @Test func anchorsAndAliasesResolve() throws {
        let (node, errors, _) = try load("base: &b {color: blue}\ncopy: *b\n")
        #expect(errors.isEmpty)
        #expect(mapping(mapping(node)[1].value).first?.value.scalar == "blue")
    }
}
