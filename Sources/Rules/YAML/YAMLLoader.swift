import Glibc
public import FoundationEssentials
import Platform

/// Loads a YAML file the way Home Assistant users expect: `!secret NAME` from `secrets.yaml` beside the file (under
/// systemd's `LoadCredential=`, first the credential NAME, then a `secrets.yaml` credential, in `$CREDENTIALS_DIRECTORY`),
/// `!env_var NAME [default]`, `!include FILE` relative to the file. Reports every problem, not only the first.
public struct YAMLLoader {
    public var environment: [String: String]
    private var secretsCache: [String: SecretsFile] = [:]

    /// A secrets file as found: absent, there but unreadable (already reported), or its entries.
    private enum SecretsFile {
        case absent, unreadable, loaded([String: YAMLNode])
    }
    private var errors: [ConfigError] = []
    /// The files being loaded, outermost first, by real path: an `!include` of one of them is a cycle.
    private var includeChain: [String] = []
    private var includeCount = 0
    private var aliasNodes = 0
    private var bytesRead = 0
    /// At most this many `!include`s in one load, however they nest.
    static let maximumIncludes = 256
    static let maximumIncludeDepth = 16
    /// The largest rules file (a 12,000-activity file is about 2 MiB), and all files of one load together.
    static let maximumFileBytes = 16 << 20
    static let maximumTotalBytes = 64 << 20

    /// For commands that render without pushing (`render`, `preview`, `template`, `send --dry-run`): a secret or
    /// environment variable that is not there reads as a placeholder (`<secret NAME>`) instead of an error, so the
    /// shipped example renders before anyone has a token. Secrets that are there are read as usual.
    public var secretsOptional = false

    public init(environment: [String: String] = ProcessInfo.processInfo.environment, secretsOptional: Bool = false) {
        self.environment = environment
        self.secretsOptional = secretsOptional
    }

    private func placeholder(_ source: String, at location: SourceLocation) -> YAMLNode {
        var node = YAMLNode(.scalar("<\(source)>"), at: location, secretSource: source)
        node.isPlain = false
        return node
    }

    /// The root node (nil when the file is empty or unreadable) and every error found.
    public mutating func load(file path: String) -> (YAMLNode?, [ConfigError]) {
        errors = []
        includeChain = [Self.realPath(path)]
        includeCount = 0
        aliasNodes = 0
        bytesRead = 0
        let node = loadFile(path, from: nil)
        return (node, errors)
    }

    /// Loads from text, as if it were the file `path` (includes and secrets resolve beside it).
    public mutating func load(text: String, file path: String) -> (YAMLNode?, [ConfigError]) {
        errors = []
        includeChain = [Self.realPath(path)]
        includeCount = 0
        aliasNodes = 0
        bytesRead = 0
        let node = parse(text, file: path)
        return (node, errors)
    }

    private mutating func loadFile(_ path: String, from: SourceLocation?) -> YAMLNode? {
        // Looked at before it is opened: a FIFO or a device would block or never end, a huge file fill memory.
        var info = stat()
        if stat(path, &info) == 0 {
            let here = from ?? SourceLocation(file: path, line: 1, column: 1)
            guard info.st_mode & S_IFMT == S_IFREG else {
                let why = info.st_mode & S_IFMT == S_IFDIR ? String(cString: strerror(EISDIR)) : "not a regular file"
                errors.append(ConfigError(here, path: "", "cannot read \(path): \(why)"))
                return nil
            }
            guard Int(info.st_size) <= Self.maximumFileBytes, bytesRead + Int(info.st_size) <= Self.maximumTotalBytes else {
                errors.append(ConfigError(here, path: "", Int(info.st_size) > Self.maximumFileBytes
                    ? "\(path) is \(info.st_size) bytes; a rules file may be at most \(Self.maximumFileBytes >> 20) MiB"
                    : "with its includes the configuration is more than \(Self.maximumTotalBytes >> 20) MiB"))
                return nil
            }
            bytesRead += Int(info.st_size)
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            errors.append(ConfigError(from ?? SourceLocation(file: path, line: 1, column: 1), path: "",
                                      "cannot read \(path): \(Self.whyUnreadable(path))"))
            return nil
        }
        guard let text = String(data: data, encoding: .utf8) else {
            errors.append(ConfigError(SourceLocation(file: path, line: 1, column: 1), path: "", "\(path) is not UTF-8 text"))
            return nil
        }
        return parse(text, file: path)
    }

    private mutating func parse(_ text: String, file: String) -> YAMLNode? {
        do throws(ConfigError) {
            guard text.utf8.count <= Self.maximumFileBytes else {
                throw ConfigError(SourceLocation(file: file, line: 1, column: 1), path: "",
                                  "\(file) is \(text.utf8.count) bytes; a rules file may be at most \(Self.maximumFileBytes >> 20) MiB")
            }
            guard let (raw, nodes) = try YAMLParser.parse(text, file: file) else { return nil }
            // Included files count toward one budget: 256 includes of a file just under the bound would not do.
            aliasNodes += nodes
            guard aliasNodes <= YAMLParser.maximumAliasNodes else {
                throw ConfigError(raw.location, path: "",
                                  "with its includes, aliases expand the configuration to more than \(YAMLParser.maximumAliasNodes) nodes")
            }
            return resolve(raw, directory: PathText.directory(of: file))
        } catch {
            errors.append(error)
            return nil
        }
    }

    private mutating func resolve(_ raw: YAMLParser.Raw, directory: String) -> YAMLNode? {
        switch raw {
        case .scalar(let text, let tag, let plain, let location, let layout):
            switch tag {
            case nil, "tag:yaml.org,2002:str":
                var node = YAMLNode(.scalar(text), at: location, isPlain: plain && tag == nil)
                node.layout = layout
                return node
            case "!secret":
                return secret(text, at: location, directory: directory)
            case "!env_var":
                return environmentVariable(text, at: location)
            case "!include":
                return include(text, at: location, directory: directory)
            default:
                errors.append(ConfigError(location, path: "", "unknown tag \(tag!); supported: !secret, !env_var, !include"))
                return nil
            }
        case .sequence(let items, let tag, let location):
            if let tag { errors.append(ConfigError(location, path: "", "tag \(tag) cannot be used on a list")) }
            return YAMLNode(.sequence(items.compactMap { resolve($0, directory: directory) }), at: location)
        case .mapping(let pairs, let tag, let location):
            if let tag { errors.append(ConfigError(location, path: "", "tag \(tag) cannot be used on a mapping")) }
            var entries: [(key: YAMLNode, value: YAMLNode)] = []
            var seen: [String: SourceLocation] = [:]
            for (rawKey, rawValue) in pairs {
                guard let key = resolve(rawKey, directory: directory) else { continue }
                guard let name = key.scalar else {
                    errors.append(ConfigError(key.location, path: "", "a key must be a plain name, not \(key.kindName)"))
                    continue
                }
                if let first = seen[name] {
                    errors.append(ConfigError(key.location, path: "", "duplicate key \"\(name)\" (first at line \(first.line))"))
                    continue
                }
                seen[name] = key.location
                let value = resolve(rawValue, directory: directory)
                    ?? YAMLNode(.scalar(""), at: rawValue.location, isPlain: true)
                entries.append((key, value))
            }
            return YAMLNode(.mapping(entries), at: location)
        }
    }

    private mutating func secret(_ name: String, at location: SourceLocation, directory: String) -> YAMLNode? {
        let path = PathText.join(directory, "secrets.yaml")
        // Under systemd's LoadCredential= the service's own credentials come first: secrets.yaml beside the rules
        // may be there but readable only by root, which is why the credential exists.
        let credentials = environment["CREDENTIALS_DIRECTORY"].flatMap { $0.isEmpty ? nil : $0 }
        if let credentials, let value = credential(name, in: credentials, at: location) { return value }
        let places = (credentials.map { [PathText.join($0, "secrets.yaml")] } ?? []) + [path]
        var unreadable = false
        for file in places {
            switch secrets(in: file) {
            case .loaded(let secrets):
                if var value = secrets[name], value.scalar != nil {
                    value.location = location
                    value.secretSource = "!secret " + name
                    value.isPlain = false
                    return value
                }
            case .unreadable: unreadable = true
            case .absent: break
            }
        }
        // Why it could not be read is reported already; "not defined" would mislead. Past an error the value stands
        // as a placeholder, so the key it fills is not reported missing too: one error per cause.
        if unreadable { return placeholder("!secret " + name, at: location) }
        if secretsOptional { return placeholder("!secret " + name, at: location) }
        let looked = places.filter { if case .absent = secrets(in: $0) { false } else { true } }
        if looked.isEmpty {
            errors.append(ConfigError(location, path: "", "!secret \(name): no secrets file at \(path)"
                                      + (credentials.map { " and no credential \(name) in \($0)" } ?? "")))
        } else {
            errors.append(ConfigError(location, path: "", "!secret \(name) is not defined in \(looked.joined(separator: " or "))"))
        }
        return placeholder("!secret " + name, at: location)
    }

    private mutating func secrets(in path: String) -> SecretsFile {
        if let cached = secretsCache[path] { return cached }
        let loaded = loadSecrets(path)
        secretsCache[path] = loaded
        return loaded
    }

    /// The credential file `name` in systemd's credentials folder (LoadCredential=NAME:…), its text without a final
    /// newline.
    private mutating func credential(_ name: String, in folder: String, at location: SourceLocation) -> YAMLNode? {
        guard !name.contains("/"), name != "secrets.yaml" else { return nil }
        let path = PathText.join(folder, name)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path), var text = String(data: data, encoding: .utf8) else {
            errors.append(ConfigError(location, path: "", "!secret \(name): cannot read the credential \(path): \(Self.whyUnreadable(path))"))
            return YAMLNode(.scalar(""), at: location, secretSource: "!secret " + name)
        }
        if text.hasSuffix("\n") { text.removeLast() }
        var node = YAMLNode(.scalar(text), at: location, secretSource: "!secret " + name)
        node.isPlain = false
        return node
    }

    private mutating func loadSecrets(_ path: String) -> SecretsFile {
        guard FileManager.default.fileExists(atPath: path) else { return .absent }
        var nested = YAMLLoader(environment: environment)
        let (node, problems) = nested.load(file: path)
        // Errors in secrets.yaml name positions only: the loader never prints scalar values.
        errors += problems
        guard case .mapping(let entries)? = node?.kind else {
            if node != nil { errors.append(ConfigError(node!.location, path: "", "secrets.yaml must be a mapping of names to values")) }
            return problems.isEmpty ? .loaded([:]) : .unreadable
        }
        var secrets: [String: YAMLNode] = [:]
        for (key, value) in entries { if let name = key.scalar { secrets[name] = value } }
        return .loaded(secrets)
    }

    /// Why a file that exists could not be read, as the system says it ("Permission denied", "Is a directory").
    static func whyUnreadable(_ path: String) -> String {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return String(cString: strerror(errno)) }
        defer { close(descriptor) }
        var byte: UInt8 = 0
        guard read(descriptor, &byte, 1) >= 0 else { return String(cString: strerror(errno)) }
        return "not readable as text"
    }

    private mutating func environmentVariable(_ text: String, at location: SourceLocation) -> YAMLNode? {
        let parts = text.split(separator: " ", maxSplits: 1).map { $0.trimmingSpaces() }
        guard let name = parts.first, !name.isEmpty else {
            errors.append(ConfigError(location, path: "", "!env_var needs a variable name"))
            return nil
        }
        if let value = environment[name] {
            return YAMLNode(.scalar(value), at: location, secretSource: "!env_var " + name)
        }
        if parts.count == 2 {
            return YAMLNode(.scalar(parts[1]), at: location, isPlain: true)
        }
        if secretsOptional { return placeholder("!env_var " + name, at: location) }
        errors.append(ConfigError(location, path: "", "environment variable \(name) is not set and no default is given"))
        return placeholder("!env_var " + name, at: location)
    }

    private mutating func include(_ file: String, at location: SourceLocation, directory: String) -> YAMLNode? {
        let path = file.hasPrefix("/") ? file : PathText.join(directory, file)
        let real = Self.realPath(path)
        if let start = includeChain.firstIndex(of: real) {
            let cycle = (includeChain[start...] + [real]).map { PathText.lastComponent(of: $0) }.joined(separator: " → ")
            errors.append(ConfigError(location, path: "", "!include \(file) is a cycle: \(cycle)"))
            return nil
        }
        guard includeChain.count <= Self.maximumIncludeDepth else {
            errors.append(ConfigError(location, path: "", "!include nested more than \(Self.maximumIncludeDepth) deep"))
            return nil
        }
        includeCount += 1
        guard includeCount <= Self.maximumIncludes else {
            if includeCount == Self.maximumIncludes + 1 {
                errors.append(ConfigError(location, path: "", "more than \(Self.maximumIncludes) !include in one configuration"))
            }
            return nil
        }
        includeChain.append(real)
        defer { includeChain.removeLast() }
        return loadFile(path, from: location)
    }

    /// The path with links and `..` resolved, so one file reached two ways is one file; as given if it does not exist.
    static func realPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
