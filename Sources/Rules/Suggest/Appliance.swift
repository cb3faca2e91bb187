/// Something people put on their Lock Screen, recognised among Home Assistant's entities by `ApplianceRecognizer`:
/// what it is and which entities say when it runs and how far it is.
public struct Appliance: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case washer, dryer, dishwasher, printer, evCharging = "ev_charging", timer, vacuum, mediaPlayer = "media_player"

        /// As a comment names it.
        public var title: String {
            switch self {
            case .washer: "washing machine"
            case .dryer: "dryer"
            case .dishwasher: "dishwasher"
            case .printer: "3D printer"
            case .evCharging: "EV charging"
            case .timer: "timer"
            case .vacuum: "robot vacuum"
            case .mediaPlayer: "media player"
            }
        }
    }

    /// When it counts as running.
    public enum Running: Sendable, Equatable {
        /// A status entity in one of these states.
        case states(String, [String])
        /// A status entity in none of these states (its vocabulary is not known).
        case notStates(String, [String])
        /// A power sensor above this many watts.
        case power(String, watts: Int)
        /// A progress sensor strictly between 0 and 100.
        case progressBetween(String)
    }

    /// How the remaining time is given.
    public enum Remaining: Sendable, Equatable {
        /// A timestamp of the end (the phone counts down itself).
        case finishesAt(String)
        /// A number of minutes (or another unit) left.
        case amount(String, unit: String)
        /// An attribute holding the end as a timestamp (timers' `finishes_at`).
        case attribute(String, String)
    }

    public var kind: Kind
    /// The activity's id in the rules file: the entities' shared prefix (`washer`, `laundry`).
    public var id: String
    /// What Home Assistant calls it (from a friendly name), for the Lock Screen.
    public var name: String
    public var running: Running
    public var progress: String?
    public var remaining: Remaining?
    public var battery: String?
    /// The main entity (a vacuum, a media player, a timer).
    public var entity: String?
    /// The area Home Assistant's registries put it in.
    public var area: String?

    /// Every entity the proposal reads, for its comment.
    public var entities: [String] {
        var ids: [String] = []
        switch running {
        case .states(let id, _), .notStates(let id, _), .power(let id, _), .progressBetween(let id): ids.append(id)
        }
        for id in [entity, progress, battery].compactMap({ $0 }) where !ids.contains(id) { ids.append(id) }
        switch remaining {
        case .finishesAt(let id)?, .amount(let id, _)?, .attribute(let id, _)?: if !ids.contains(id) { ids.append(id) }
        case nil: break
        }
        return ids
    }
}
