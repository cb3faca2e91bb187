import Rules

/// A test's rules file: its fixed header (backends, defaults, `activities:`) followed by the activities under test,
/// loaded from a folder as `livebridge check` loads one. Line numbers in expectations count from the header's first.
struct RulesFixture {
    let header: String

    func load(_ activities: String) throws -> Result<RulesFile, ConfigErrors> {
        let folder = try ConfigFolder(["livebridge.yaml": header + activities])
        return RulesLoader.load(file: folder.file("livebridge.yaml"), environment: [:])
    }

    /// Every error as `line:column path: message`; none when the file loads.
    func errors(_ activities: String) throws -> [String] {
        guard case .failure(let failure) = try load(activities) else { return [] }
        return failure.positioned
    }
}

extension ConfigErrors {
    /// Each error as `line:column path: message`, as the tests compare them.
    var positioned: [String] { errors.map { "\($0.location.line):\($0.location.column) \($0.path): \($0.message)" } }
}
