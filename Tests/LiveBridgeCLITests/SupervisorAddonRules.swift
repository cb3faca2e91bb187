import Rules

/// What Home Assistant's Supervisor checks when it reads an add-on repository, ported from home-assistant/supervisor
/// (2026): `supervisor/apps/validate.py` (`_SCHEMA_APP_CONFIG`, `_warn_app_config`, `SCHEMA_BUILD_CONFIG`,
/// `SCHEMA_APP_TRANSLATIONS`), `supervisor/apps/options.py` (`RE_SCHEMA_ELEMENT`, and the options checked against the
/// schema at start) and `supervisor/store/validate.py` (`SCHEMA_REPOSITORY_CONFIG`). Supervisor skips an add-on whose
/// config fails these; each problem here says where (line:column) and what.
enum SupervisorAddonRules {
    static let architectures: Set = ["aarch64", "amd64", "armhf", "armv7", "i386"]
    static let deprecatedArchitectures: Set = ["armhf", "armv7", "i386"]
    static let mapTypes: Set = ["data", "config", "ssl", "local_apps", "backup", "share", "media", "homeassistant_config",
                                "all_app_configs", "app_config", "addons", "all_addon_configs", "addon_config"]
    static let startups: Set = ["initialize", "system", "services", "application", "once", "before", "after"]
    static let boots: Set = ["auto", "manual", "manual_only"]
    static let stages: Set = ["stable", "experimental", "deprecated"]
    static let roles: Set = ["default", "homeassistant", "backup", "manager", "admin"]
    static var slug: some RegexComponent { /^[-_.A-Za-z0-9]+$/ }
    static var watchdog: some RegexComponent { /^(?:https?|\[PROTO:\w+\]|tcp):\/\/\[HOST\]:(\[PORT:\d+\]|\d+).*$/ }
    static var webUI: some RegexComponent { /^(?:https?|\[PROTO:\w+\]):\/\/\[HOST\]:\[PORT:\d+\].*$/ }
    static var volume: some RegexComponent { /^(data|config|ssl|local_apps|addons|backup|share|media|homeassistant_config|all_app_configs|all_addon_configs|app_config|addon_config)(?::(rw|ro))?$/ }
    static var dockerImage: some RegexComponent { /^([a-zA-Z\-\.:\d{}]+\/)*?([\-\w{}]+)\/([\-\w{}]+)(:[\.\-\w{}]+)?$/ }
    static var schemaElement: some RegexComponent { /^(?:|bool|email|url|port|device(?:\((subsystem=[a-z]+)\))?|str(?:\((\d+)?,(\d+)?\))?|password(?:\((\d+)?,(\d+)?\))?|int(?:\((-?\d+)?,(-?\d+)?\))?|float(?:\((-?\d*\.?\d+)?,(-?\d*\.?\d+)?\))?|match\((.*)\)|list\((.+)\))\??$/ }
    /// YAML 1.1 booleans, as PyYAML's safe loader reads them (Supervisor's reader), and the strings `vol.Boolean` takes.
    static let booleans: Set = ["true", "True", "TRUE", "false", "False", "FALSE", "yes", "Yes", "YES", "no", "No", "NO",
                                "on", "On", "ON", "off", "Off", "OFF", "1", "0", "enable", "disable"]

    /// `config.yaml`: `_SCHEMA_APP_CONFIG` with the advisories of `_warn_app_config` that matter here.
    static func config(_ root: YAMLNode) -> [String] {
        var problems: [String] = []
        guard let top = mapping(root) else { return ["\(root.location): an add-on config must be a mapping"] }
        func note(_ node: YAMLNode, _ key: String, _ why: String) { problems.append("\(node.location): \(key): \(why)") }
        for key in ["name", "version", "slug", "description", "arch"] where top[key] == nil {
            problems.append("\(root.location): required key \(key) is missing")
        }
        for key in ["name", "description", "ingress_entry", "panel_icon", "panel_title"] {
            if let node = top[key], !isString(node) { note(node, key, "must be a string") }
        }
        if let node = top["version"], node.scalar?.isEmpty != false { note(node, "version", "must be a version") }
        if let node = top["slug"], node.scalar?.wholeMatch(of: slug) == nil { note(node, "slug", "must match [-_.A-Za-z0-9]+") }
        if let node = top["arch"] {
            if let items = sequence(node) {
                for item in items where !architectures.contains(item.scalar ?? "") { note(item, "arch", "\(item.quoted) is not one of \(architectures.sorted())") }
                for item in items where deprecatedArchitectures.contains(item.scalar ?? "") { note(item, "arch", "\(item.scalar!) is deprecated") }
            } else { note(node, "arch", "must be a list") }
        }
        if let node = top["url"], !(node.scalar ?? "").hasPrefix("http") { note(node, "url", "must be a URL") }
        if let node = top["image"], node.scalar?.wholeMatch(of: dockerImage) == nil { note(node, "image", "\(node.quoted) is not an image name") }
        for (key, allowed) in [("startup", startups), ("boot", boots), ("stage", stages), ("hassio_role", roles)] {
            if let node = top[key], !allowed.contains(node.scalar ?? "") { note(node, key, "\(node.quoted) is not one of \(allowed.sorted())") }
        }
        for key in ["init", "advanced", "ingress", "ingress_stream", "panel_admin", "host_network", "host_pid", "host_ipc",
                    "host_uts", "host_dbus", "udev", "tmpfs", "apparmor", "full_access", "audio", "video", "gpio", "usb", "uart",
                    "devicetree", "kernel_modules", "realtime", "hassio_api", "homeassistant_api", "stdin", "legacy",
                    "docker_api", "auth_api", "journald"] {
            if let node = top[key], !booleans.contains(node.scalar ?? "") { note(node, key, "must be a boolean") }
        }
        if let node = top["watchdog"], node.scalar?.wholeMatch(of: watchdog) == nil {
            note(node, "watchdog", "must look like http://[HOST]:[PORT:8099]/path")
        }
        if let node = top["webui"], node.scalar?.wholeMatch(of: webUI) == nil { note(node, "webui", "must look like http://[HOST]:[PORT:80]/") }
        if let node = top["ingress_port"], Int(node.scalar ?? "").map({ (0...65535).contains($0) }) != true {
            note(node, "ingress_port", "must be a port (1–65535) or 0")
        }
        if let node = top["timeout"], Int(node.scalar ?? "").map({ (10...300).contains($0) }) != true { note(node, "timeout", "must be 10…300") }
        if let node = top["map"] {
            if let items = sequence(node) {
                for item in items {
                    if let entry = mapping(item) {
                        if let type = entry["type"] {
                            if !mapTypes.contains(type.scalar ?? "") { note(type, "map.type", "\(type.quoted) is not one of \(mapTypes.sorted())") }
                        } else { note(item, "map", "an entry needs a type") }
                        if let readOnly = entry["read_only"], !["true", "false"].contains(readOnly.scalar ?? "") { note(readOnly, "map.read_only", "must be true or false") }
                    } else if item.scalar?.wholeMatch(of: volume) == nil {
                        note(item, "map", "\(item.quoted) is not TYPE[:rw|:ro]")
                    }
                }
            } else { note(node, "map", "must be a list") }
        }
        var schemaKeys: [String: YAMLNode] = [:]
        if let node = top["schema"], node.scalar != "false" {
            if let schema = mapping(node) {
                schemaKeys = schema
                for (key, element) in schema { problems += schemaProblems(element, path: "schema.\(key)") }
            } else { note(node, "schema", "must be a mapping or false") }
        }
        if let node = top["options"] {
            if let options = mapping(node) {
                // At start, Supervisor checks the options against the schema (apps/options.py): every option needs an
                // element, and every required element an option.
                for (key, value) in options {
                    guard let element = schemaKeys[key] else {
                        if top["schema"]?.scalar != "false" { note(value, "options.\(key)", "has no schema element") }
                        continue
                    }
                    if let why = optionProblem(value, element) { note(value, "options.\(key)", why) }
                }
                for (key, element) in schemaKeys where options[key] == nil && !(element.scalar ?? "").hasSuffix("?") {
                    note(element, "schema.\(key)", "is required but options has no default for it")
                }
            } else { note(node, "options", "must be a mapping") }
        }
        return problems
    }

    /// One schema element: a type string (`RE_SCHEMA_ELEMENT`), a list of one, or a mapping of them.
    static func schemaProblems(_ element: YAMLNode, path: String) -> [String] {
        if let text = element.scalar {
            return text.wholeMatch(of: schemaElement) == nil ? ["\(element.location): \(path): unknown type \(element.quoted)"] : []
        }
        if let items = sequence(element) {
            return items.flatMap { item in
                sequence(item) != nil ? ["\(item.location): \(path): a list may not hold a list"] : schemaProblems(item, path: path + "[]")
            }
        }
        return (mapping(element) ?? [:]).flatMap { schemaProblems($0.value, path: path + "." + $0.key) }
    }

    /// A default option's value against its element's type, as `AppOptions` checks it.
    static func optionProblem(_ value: YAMLNode, _ element: YAMLNode) -> String? {
        guard let type = element.scalar.map({ $0.hasSuffix("?") ? String($0.dropLast()) : $0 }), let text = value.scalar else { return nil }
        if type == "bool" { return ["true", "false"].contains(text) ? nil : "must be true or false for bool" }
        if type.hasPrefix("int") { return Int(text) == nil ? "must be an integer" : nil }
        if type.hasPrefix("float") { return Double(text) == nil ? "must be a number" : nil }
        if type == "port" { return Int(text).map { (1...65535).contains($0) } == true ? nil : "must be a port" }
        if type.hasPrefix("list("), type.hasSuffix(")") {
            let choices = type.dropFirst(5).dropLast().split(separator: "|").map(String.init)
            return choices.contains(text) ? nil : "\(value.quoted) is not one of \(choices)"
        }
        if type.hasPrefix("match("), type.hasSuffix(")") {
            let pattern = String(type.dropFirst(6).dropLast())
            guard let regex = try? Regex(pattern) else { return "the schema's pattern \(pattern) does not compile" }
            // Supervisor uses re.fullmatch.
            return text.wholeMatch(of: regex) == nil ? "\(value.quoted) does not match \(pattern)" : nil
        }
        return nil
    }

    /// `build.yaml`: `SCHEMA_BUILD_CONFIG`.
    static func build(_ root: YAMLNode) -> [String] {
        guard let top = mapping(root) else { return ["\(root.location): build.yaml must be a mapping"] }
        var problems: [String] = []
        if let node = top["build_from"] {
            if let image = node.scalar {
                if image.wholeMatch(of: dockerImage) == nil { problems.append("\(node.location): build_from: \(node.quoted) is not an image") }
            } else if let images = mapping(node) {
                for (arch, image) in images {
                    if !architectures.contains(arch) { problems.append("\(image.location): build_from: \(arch) is not an architecture") }
                    if image.scalar?.wholeMatch(of: dockerImage) == nil { problems.append("\(image.location): build_from.\(arch): \(image.quoted) is not an image") }
                }
            } else { problems.append("\(node.location): build_from must be an image or a mapping of them") }
        }
        for key in ["args", "labels"] {
            if let node = top[key], let entries = mapping(node) {
                for (name, value) in entries where value.scalar == nil { problems.append("\(value.location): \(key).\(name) must be a string") }
            } else if let node = top[key] { problems.append("\(node.location): \(key) must be a mapping") }
        }
        return problems
    }

    /// `translations/LANG.yaml`: `SCHEMA_APP_TRANSLATIONS`, and each configuration entry naming an option of the schema.
    static func translations(_ root: YAMLNode, schemaKeys: Set<String>) -> [String] {
        guard let top = mapping(root) else { return ["\(root.location): a translation must be a mapping"] }
        var problems: [String] = []
        if let node = top["configuration"] {
            for (key, entry) in mapping(node) ?? [:] {
                if !schemaKeys.contains(key) { problems.append("\(entry.location): configuration.\(key) is not an option of the schema") }
                guard let fields = mapping(entry) else { problems.append("\(entry.location): configuration.\(key) must be a mapping"); continue }
                if fields["name"]?.scalar == nil { problems.append("\(entry.location): configuration.\(key).name is required") }
            }
        }
        if let node = top["network"], mapping(node) == nil { problems.append("\(node.location): network must be a mapping") }
        return problems
    }

    /// `repository.yaml`: `SCHEMA_REPOSITORY_CONFIG`.
    static func repository(_ root: YAMLNode) -> [String] {
        guard let top = mapping(root) else { return ["\(root.location): repository.yaml must be a mapping"] }
        var problems: [String] = []
        if top["name"]?.scalar?.isEmpty != false { problems.append("\(root.location): required key name is missing") }
        if let node = top["url"], !(node.scalar ?? "").hasPrefix("http") { problems.append("\(node.location): url must be a URL") }
        if let node = top["maintainer"], node.scalar == nil { problems.append("\(node.location): maintainer must be a string") }
        return problems
    }

    static func mapping(_ node: YAMLNode) -> [String: YAMLNode]? {
        guard case .mapping(let pairs) = node.kind else { return nil }
        return Dictionary(pairs.compactMap { pair in pair.key.scalar.map { ($0, pair.value) } }, uniquingKeysWith: { first, _ in first })
    }

    static func sequence(_ node: YAMLNode) -> [YAMLNode]? {
        if case .sequence(let items) = node.kind { return items }
        return nil
    }

    /// What PyYAML reads as a string: quoted, or plain and not null, a boolean or a number.
    static func isString(_ node: YAMLNode) -> Bool {
        guard let text = node.scalar else { return false }
        return !node.isPlain || !(node.isNull || booleans.contains(text) || Double(text) != nil)
    }
}
