public import JSON

/// The local copy of the entities LiveBridge watches, kept from `subscribe_entities`' compressed messages, read
/// straight from their text (or, on the `state_changed` path, from full states: `replace(withFullStates:keeping:)`,
/// `set(_:fullState:)`).
///
/// A snapshot (`a` in the first event of a subscription) replaces the store: an entity that vanished
/// while disconnected is removed, not kept. Later events carry `a` (added), `c` (changed: `+` sets,
/// `-` removes attributes) and `r` (removed). Every method returns what changed, in order.
public struct EntityStore: Sendable {
    public private(set) var states: [String: EntityState] = [:]
    /// The ids in Home Assistant's state machine's order, as `get_states` and a snapshot give them: first seen first,
    /// an entity removed and back comes last (templates iterate `states` in it). A place outlives a reconnection.
    public private(set) var order: [String] = []
    private var names = SharedNames()
    /// Room for a frame's diffs while `readDiffFrame` reads them, and whose they are: kept between frames, empty.
    private var frameDiffs: [Diff] = []
    private var frameTargets: [Dictionary<String, EntityState>.Index] = []
    /// Where a frame's entity is, by its id's bytes: emptied (`keysChanged`) wherever an entity is added or removed.
    private var keyCache = EntityKeyCache<Dictionary<String, EntityState>.Index>()
    /// Once `share` has named them, the only entities kept: a server that sends others (a bug, or a hostile one
    /// sending a hundred thousand) costs a skip each, not memory.
    private var watched: EntitySelection?

    public init() {}

    /// A consumer reads the store where it is (`HomeAssistantConnection(lendsStates:)`) rather than a copy of its own:
    /// a frame's diff then hands over its entity's id (`EntityChange.changed`), so the store stays the state's only
    /// holder and the next diff changes it in place; and a snapshot's states are lent (`lent`) only once the consumer
    /// has taken the snapshot's changes (`tookSnapshot`), until then those from before it, as a consumer keeping its
    /// own copy would have them. A (re)connection's snapshot is Home Assistant's states fresh from a restart: what
    /// evaluates before the consumer has taken it, and begun its restart grace, must not see them.
    public var isLent = false
    /// The states and order a snapshot replaced, while the consumer has not taken it (the first of several).
    private var beforeSnapshot: (states: [String: EntityState], order: [String])?

    /// What a consumer reading the store sees: the states and Home Assistant's order, or those from before a
    /// snapshot it has not taken yet.
    public var lent: (states: [String: EntityState], order: [String]) { beforeSnapshot ?? (states, order) }

    /// The consumer has taken the snapshots so far: it reads the store as it is from now on.
    public mutating func tookSnapshot() { beforeSnapshot = nil }

    /// The ids the rules watch, sorted: only these are kept from now on, and they keep the rules' instance of their id.
    public mutating func share(entityIDs sorted: [String]) {
        share(EntitySelection(entityIDs: sorted))
    }

    /// What the rules watch: only these entities are kept from now on; named ids keep the rules' instance of the id.
    public mutating func share(_ selection: EntitySelection) {
        names.share(entityIDs: selection.entityIDs)
        watched = selection
        states = states.filter { selection.contains($0.key) }
        keysChanged()
        order.removeAll { !selection.contains($0) }
        if let before = beforeSnapshot {
            beforeSnapshot = (before.states.filter { selection.contains($0.key) }, before.order.filter { selection.contains($0) })
        }
    }

    private func isWatched(_ id: String) -> Bool { watched?.contains(id) ?? true }

    public subscript(entityID: String) -> EntityState? { states[entityID] }
    public var count: Int { states.count }

    /// What a snapshot held that could not be taken, for a warning: no entities object at all, or watched entities
    /// whose entry has no state (not an object, or no `s`).
    public struct SnapshotProblems: Equatable, Sendable {
        /// The event had no `a` object (a diff or nothing where the snapshot belongs).
        public var noEntities = false
        /// How many watched entries had no state, and the first few ids.
        public var unreadableCount = 0
        public var unreadable: [String] = []

        public init() {}

        mutating func skipped(_ id: String) {
            unreadableCount += 1
            if unreadable.count < 5 { unreadable.append(id) }
        }

        /// The ids as a warning names them: the first five, then how many more.
        public var unreadableList: String {
            unreadable.joined(separator: ", ") + (unreadableCount > unreadable.count ? " and \(unreadableCount - unreadable.count) more" : "")
        }

        /// The warnings for `source` (`subscribe_entities`' first event, `get_states`): none when all was taken.
        public func warnings(in source: String) -> [String] {
            var said: [String] = []
            if noEntities { said.append("\(source) held no snapshot (no \"a\" object): entities are known only once they change") }
            if unreadableCount > 0 {
                said.append("skipped \(unreadableCount) \(unreadableCount == 1 ? "entity" : "entities") of \(source) with no state: \(unreadableList)")
            }
            return said
        }
    }

    /// Replaces everything with a snapshot's `a` object. Unchanged entities are not reported.
    public mutating func replace(withSnapshot event: JSONText) throws -> [EntityChange] {
        var problems = SnapshotProblems()
        return try replace(withSnapshot: event, problems: &problems)
    }

    /// As `replace(withSnapshot:)`, saying in `problems` what could not be taken.
    public mutating func replace(withSnapshot event: JSONText, problems: inout SnapshotProblems) throws -> [EntityChange] {
        var fresh: [(id: String, state: EntityState)] = []
        problems = SnapshotProblems()
        // Checked once first: the entities not kept (most of a large home) are then skipped without checking again.
        try event.checked().read { reader in
            let parts = try Parts(&reader)
            guard let added = parts.added else { problems.noEntities = true; return }
            var entities = reader.subreader(added)
            try entities.readObject { reader, id in
                guard isWatched(id) else { try reader.skipValue(); return }
                let id = names.entityID(id)
                if let state = try Self.readFull(id: id, &reader, names: &names) { fresh.append((id, state)) } else { problems.skipped(id) }
            }
        }
        return replace(with: fresh)
    }

    /// Replaces everything with the entities of `get_states` that are in `watched`.
    public mutating func replace(withFullStates fullStates: [JSONValue], keeping watched: EntitySelection) -> [EntityChange] {
        var problems = SnapshotProblems()
        return replace(withFullStates: fullStates, keeping: watched, problems: &problems)
    }

    /// As `replace(withFullStates:keeping:)`, saying in `problems` which watched entries had no state (an entry
    /// without a text `entity_id` cannot be watched, and is not named).
    public mutating func replace(withFullStates fullStates: [JSONValue], keeping watched: EntitySelection,
                                 problems: inout SnapshotProblems) -> [EntityChange] {
        var fresh: [(id: String, state: EntityState)] = []
        problems = SnapshotProblems()
        for fullState in fullStates {
            guard let id = fullState["entity_id"]?.stringValue, watched.contains(id) else { continue }
            let shared = names.entityID(id)
            if let state = EntityState(entityID: shared, fullState: fullState) { fresh.append((shared, state)) } else { problems.skipped(id) }
        }
        return replace(with: fresh)
    }

    /// Replaces everything with these states (a snapshot however it came, in Home Assistant's order): removed
    /// entities first, in id order, then new or changed ones in the snapshot's order, which is the state machine's
    /// (templates iterate `states` in it). Unchanged entities are not reported. An id given twice keeps its first
    /// place and its last state.
    private mutating func replace(with ordered: [(id: String, state: EntityState)]) -> [EntityChange] {
        var fresh: [String: EntityState] = [:]
        fresh.reserveCapacity(ordered.count)
        var order: [String] = []
        for (id, state) in ordered {
            if fresh.updateValue(state, forKey: id) == nil { order.append(id) }
        }
        var changes: [EntityChange] = []
        for id in states.keys.sorted() where fresh[id] == nil {
            changes.append(.removed(entityID: id))
        }
        for id in order where states[id] != fresh[id] {
            changes.append(.updated(fresh[id]!))
        }
        // A snapshot that changes nothing is not handed over (no change to publish), so nothing would take it: the
        // states from before it are not kept for it (they equal these).
        if isLent, beforeSnapshot == nil, !changes.isEmpty { beforeSnapshot = (states, self.order) }
        // Kept in place, gone out, new ones last in the snapshot's order.
        var placed = self.order.filter { fresh[$0] != nil }
        placed += order.filter { states[$0] == nil }
        self.order = placed
        states = fresh
        keysChanged()
        return changes
    }

    /// Applies a later event of the subscription: `a`, then `c`, then `r`, each in entity id order.
    public mutating func apply(_ event: JSONText) throws -> [EntityChange] {
        if let changes = try applyOneDiff(event) { return changes }
        var changes: [EntityChange] = []
        // Parts are applied as they are read: a malformed part further on must not leave the first ones applied.
        try event.checked().read { reader in
            let parts = try Parts(&reader)
            if let added = parts.added {
                var entities: [(id: String, state: EntityState)] = []
                var members = reader.subreader(added)
                try members.readObject { reader, id in
                    guard isWatched(id) else { try reader.skipValue(); return }
                    let id = names.entityID(id)
                    if let state = try Self.readFull(id: id, &reader, names: &names) { entities.append((id, state)) }
                }
                for (id, state) in Self.latestByID(entities) {
                    if states.updateValue(state, forKey: id) == nil { placeAdded(id) }
                    changes.append(.updated(state))
                }
            }
            if let changed = parts.changed {
                var diffs: [(id: String, range: Range<Int>)] = []
                var members = reader.subreader(changed)
                try members.readObject { reader, id in diffs.append((id, try reader.skipValueRange())) }
                for (id, range) in Self.latestByID(diffs) {
                    guard let index = states.index(forKey: id) else { continue }
                    var reader = members.subreader(range)
                    var diff = Diff()
                    try diff.read(&reader, names: &names)
                    changes.append(.updated(diff.apply(to: &states.values[index])))
                }
            }
            if let removed = parts.removed {
                var ids = reader.subreader(removed)
                guard ids.nextKind == .array else { return }
                try ids.readArray { reader in
                    if let id = try reader.readStringIfPresent(), states.removeValue(forKey: id) != nil {
                        placeRemoved(id)
                        changes.append(.removed(entityID: id))
                    }
                }
            }
        }
        return changes
    }

    /// A frame `readDiffFrame` took, message by message in order.
    public enum FramePart: Sendable, Equatable {
        /// A diff read, to apply with `applyFrameDiff(_:)` (its room's position), and the message's bytes.
        case diff(Int, Range<Int>)
        /// A diff of an entity not kept: nothing to apply.
        case notKept(Range<Int>)
        /// Any other message, valid JSON, not read: the caller decodes and handles it in its place.
        case other(Range<Int>)

        /// Where the message stands in the frame.
        public var range: Range<Int> {
            switch self {
            case .diff(_, let range), .notKept(let range), .other(let range): range
            }
        }
    }

    /// Room for a frame's parts, kept between frames (the caller holds it from `readDiffFrame` to `endFrame`).
    private var frameParts: [FramePart] = []
    /// How many of the room's diffs the current frame uses.
    private var frameDiffCount = 0

    /// Reads a frame of Home Assistant's one-entity diffs for subscription `subscriptionID` in place
    /// (`EntityDiffFrame`), every message before any is applied: its parts in order, for the caller to apply
    /// (`applyFrameDiff`) and hand back (`endFrame`). Nil, with nothing kept, for a frame of any other shape, which
    /// the caller then reads the general way.
    public mutating func readDiffFrame(_ frame: UnsafeBufferPointer<UInt8>, subscriptionID: Int) -> [FramePart]? {
        // Taken out while reading and put back with their room for the next frame, by swaps: moved, not copied (a
        // copy out and an assignment back were a retain and a release of each, every frame).
        var diffs: [Diff] = [], targets: [Dictionary<String, EntityState>.Index] = [], parts: [FramePart] = []
        swap(&diffs, &frameDiffs)
        swap(&targets, &frameTargets)
        swap(&parts, &frameParts)
        var count = 0
        var readThis = false
        let isDiffFrame = EntityDiffFrame.read(frame, subscriptionID: subscriptionID, diff: { reader, id in
            // Only a kept entity's diff is read into a change: any other is checked and skipped.
            guard let index = index(of: id) else { try reader.skipValue(); return }
            if count == diffs.count {
                diffs.append(Diff())
                targets.append(index)
            } else {
                targets[count] = index
            }
            count += 1
            readThis = true
            try diffs[count - 1].read(&reader, names: &names)
        }, element: { element in
            switch element {
            case .diff(let range):
                parts.append(readThis ? .diff(count - 1, range) : .notKept(range))
            case .other(let range):
                if readThis {
                    // Read as a diff, then not one after all: forgotten.
                    count -= 1
                    diffs[count].reset()
                }
                parts.append(.other(range))
            }
            readThis = false
        })
        swap(&diffs, &frameDiffs)
        swap(&targets, &frameTargets)
        frameDiffCount = count
        guard isDiffFrame else {
            endFrame(parts)
            return nil
        }
        return parts
    }

    /// Applies the current frame's diff at `position` (a `.diff` of its parts) to its entity; what changed.
    /// Valid only while nothing else changed the store since `readDiffFrame` (the diff knows its entity by place).
    /// A lent store's change holds no state (`isLent`): only the entity's id.
    public mutating func applyFrameDiff(_ position: Int) -> EntityChange {
        precondition(position < frameDiffCount, "a diff of the frame read last")
        let index = frameTargets[position]
        // Moved out and back (a swap moves, a read would copy: a retain and release of each of its parts a change).
        var diff = Diff()
        swap(&diff, &frameDiffs[position])
        defer { swap(&diff, &frameDiffs[position]) }
        guard isLent else { return .updated(diff.apply(to: &states.values[index])) }
        diff.applyInPlace(to: &states.values[index])
        return .changed(entityID: states.keys[index])
    }

    /// The frame is done, applied or not: its parts' room comes back, what its diffs held goes now.
    public mutating func endFrame(_ parts: consuming [FramePart]) {
        var parts = parts
        if frameDiffs.count > Self.keptFrameDiffs || parts.count > Self.keptFrameDiffs {
            frameDiffs = []
            frameTargets = []
            frameParts = []
        } else {
            for position in 0..<frameDiffCount { frameDiffs[position].reset() }
            parts.removeAll(keepingCapacity: true)
            swap(&parts, &frameParts)  // moved back: no retain and release
        }
        frameDiffCount = 0
    }

    /// Applies a frame of one-entity diffs only (no other message) in place, appending what changed to `changes`;
    /// false, with nothing applied, for any other frame. For tests and the fuzz target, which compare it with the
    /// general path; the connection reads frames with `readDiffFrame` and handles their other messages itself.
    package mutating func applyDiffFrame(_ frame: UnsafeBufferPointer<UInt8>, subscriptionID: Int,
                                        into changes: inout [EntityChange]) -> Bool {
        guard let parts = readDiffFrame(frame, subscriptionID: subscriptionID) else { return false }
        let isDiffsOnly = !parts.contains { if case .other = $0 { true } else { false } }
        if isDiffsOnly {
            for case .diff(let position, _) in parts { changes.append(applyFrameDiff(position)) }
        }
        endFrame(parts)
        return isDiffsOnly
    }

    /// The most diffs (and messages) of one frame whose room is kept (a larger frame's is let go).
    static let keptFrameDiffs = 256

    /// How many values the frame room still holds (for tests: none once a frame is done).
    package var heldDiffValues: Int {
        frameDiffs.reduce(0) { held, diff in
            held + diff.setAttributes.count + diff.removedKeys.count + (diff.newState == nil ? 0 : 1)
                + (diff.lastChanged == nil ? 0 : 1) + (diff.lastUpdated == nil ? 0 : 1)
        }
    }

    /// The event nearly every message is, one entity's diff alone (`{"c":{"id":{…}}}`), read in one pass instead of
    /// finding the parts first; nil for any other shape, which `apply` then reads in full.
    /// Read whole (and so checked) before anything is applied.
    private mutating func applyOneDiff(_ event: JSONText) throws -> [EntityChange]? {
        var diff = Diff()
        var index: Dictionary<String, EntityState>.Index?
        let isOneDiff = try event.read { reader in
            guard reader.nextKind == .object else { return false }
            var keys = 0, members = 0
            try reader.readMembers { reader, key in
                keys += 1
                guard keys == 1, key == "c", reader.nextKind == .object else { try reader.skipValue(); return }
                try reader.readObject { reader, id in
                    members += 1
                    // Only a kept entity's diff is read: with a domain selection most entities are not kept.
                    guard members == 1, let found = states.index(forKey: id) else { try reader.skipValue(); return }
                    index = found
                    try diff.read(&reader, names: &names)
                }
            }
            return keys == 1 && members == 1
        }
        guard isOneDiff else { return nil }
        guard let index else { return [] }
        return [.updated(diff.apply(to: &states.values[index]))]
    }

    /// One entity's new full state, or its removal (a full state without a state, or null): what a `state_changed`
    /// event says.
    public mutating func set(_ entityID: String, fullState: JSONValue) -> [EntityChange] {
        let id = names.entityID(entityID)
        guard let state = EntityState(entityID: id, fullState: fullState) else {
            guard states.removeValue(forKey: id) != nil else { return [] }
            placeRemoved(id)
            return [.removed(entityID: id)]
        }
        if states.updateValue(state, forKey: id) == nil { placeAdded(id) }
        return [.updated(state)]
    }

    /// An entity was added to `states`: it comes last in the order.
    private mutating func placeAdded(_ id: String) {
        order.append(id)
        keysChanged()
    }

    /// An entity was removed from `states`.
    private mutating func placeRemoved(_ id: String) {
        if let at = order.firstIndex(of: id) { order.remove(at: at) }
        keysChanged()
    }

    /// `states` gained or lost a key: its indices are stale, and so is what `keyCache` remembers.
    private mutating func keysChanged() { keyCache.removeAll() }

    /// Where the entity with id `key` is kept (nil: not kept), by the key's bytes when they were seen before.
    private mutating func index(of key: JSONKey) -> Dictionary<String, EntityState>.Index? {
        guard let bytes = key.unescapedBytes else { return states.index(forKey: key.string) }
        switch keyCache.lookup(bytes) {
        case .kept(let index): return index
        case .notKept: return nil
        case .unknown:
            let index = states.index(forKey: key.string)
            keyCache.remember(bytes, index)
            return index
        }
    }

    /// Where an event's `a`, `c` and `r` are, so they are applied in that order whatever order they came in.
    private struct Parts {
        var added, changed, removed: Range<Int>?

        init(_ reader: inout JSONReader) throws {
            guard reader.nextKind == .object else { try reader.skipValue(); return }
            var parts = Parts()
            try reader.readMembers { reader, key in
                switch key {
                case "a": parts.added = reader.nextKind == .object ? try reader.skipValueRange() : nil
                case "c": parts.changed = reader.nextKind == .object ? try reader.skipValueRange() : nil
                case "r": parts.removed = try reader.skipValueRange()
                default: try reader.skipValue()
                }
            }
            self = parts
        }

        private init() {}
    }

    /// One entry per id, the last given, sorted by id (as a decoded object would have it).
    private static func latestByID<T>(_ entries: [(id: String, T)]) -> [(id: String, T)] {
        guard entries.count > 1 else { return entries }
        var latest: [String: Int] = [:]
        for (position, entry) in entries.enumerated() { latest[entry.id] = position }
        return latest.sorted { $0.key < $1.key }.map { entries[$0.value] }
    }

    /// A full compressed state: `s` (required), `a`, `lc`, `lu` (defaults to `lc`); the context `c` is not kept.
    static func readFull(id: String, _ reader: inout JSONReader, names: inout SharedNames) throws -> EntityState? {
        guard reader.nextKind == .object else { try reader.skipValue(); return nil }
        var state: String?
        var attributes: [EntityAttributes.Element] = []
        var lastChanged: Double?, lastUpdated: Double?
        try reader.readMembers { reader, key in
            switch key {
            case "s": state = try reader.readStringIfPresent()
            case "a":
                attributes = []
                guard reader.nextKind == .object else { try reader.skipValue(); return }
                try reader.readObject { reader, name in attributes.append((names.attributeName(name), try reader.readValue())) }
            case "lc": lastChanged = try readTime(&reader)
            case "lu": lastUpdated = try readTime(&reader)
            default: try reader.skipValue()
            }
        }
        guard let state else { return nil }
        return EntityState(entityID: id, state: state, attributes: EntityAttributes(attributes), lastChanged: lastChanged ?? 0,
                           lastUpdated: lastUpdated ?? lastChanged ?? 0)
    }
}
