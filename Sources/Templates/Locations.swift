import Glibc
import HomeAssistant
public import JSON

/// Where home is and how lengths are shown: Home Assistant's configuration's `latitude`, `longitude` and
/// `unit_system.length` ("km" or "mi").
public struct HomeLocation: Sendable, Equatable {
    public var latitude: Double
    public var longitude: Double
    public var miles: Bool

    public init(latitude: Double, longitude: Double, miles: Bool) {
        self.latitude = latitude
        self.longitude = longitude
        self.miles = miles
    }

    /// From a `get_config` answer; nil when it has no numeric location.
    public init?(configuration: JSONValue) {
        guard let latitude = configuration["latitude"]?.doubleValue, let longitude = configuration["longitude"]?.doubleValue,
              latitude.isFinite, longitude.isFinite else { return nil }
        self.init(latitude: latitude, longitude: longitude, miles: configuration["unit_system"]?["length"]?.stringValue == "mi")
    }
}

/// Home Assistant's `distance()` and `closest()`: Vincenty's distance on the WGS-84 spheroid, from home or between
/// points, in the installation's length unit (homeassistant/helpers/template/extensions/state.py and
/// util/location.py of core 2026.11, ported step by step so the figures are the same to the last digit).
enum Locations {
    typealias Home = HomeLocation

    /// `distance(*points)`: each point an entity (id or state object) with `latitude`/`longitude` attributes, or two
    /// arguments that read as numbers. One point: from home. None when a point has no location, as Home Assistant.
    static func distance(_ args: [TemplateValue], context: EvaluationContext) throws(EvaluationError) -> TemplateValue {
        var pending = args[...]
        var points: [(Double, Double)] = []
        while let value = pending.popFirst() {
            let state: TemplateMapping?
            if case .string(let text) = value, !EntityID.isValid(text) { state = nil } else { state = try resolve(value, context: context) }
            if let state {
                guard let point = coordinates(state) else { return .none }
                points.append(point)
                continue
            }
            guard let second = pending.popFirst(), let latitude = Conversions.float(value), let longitude = Conversions.float(second) else {
                return .none
            }
            points.append((latitude, longitude))
        }
        guard let first = points.first else { throw EvaluationError("distance needs a point: an entity or a latitude and longitude") }
        let metres: Double?
        if points.count == 1 {
            let home = try home(context)
            metres = distance(home.latitude, home.longitude, first.0, first.1)
        } else {
            metres = distance(first.0, first.1, points[1].0, points[1].1)
        }
        guard let metres else { throw EvaluationError("distance: the points did not converge to a distance (antipodal)") }
        return .double(length(metres, context: context))
    }

    /// `closest(entities)`, `closest(point entity, entities)`, `closest(latitude, longitude, entities)`: the state
    /// nearest the point (home by default) among the expanded entities that have a location; None when none has.
    static func closest(_ args: [TemplateValue], context: EvaluationContext) throws(EvaluationError) -> TemplateValue {
        let latitude: Double, longitude: Double, entities: TemplateValue
        switch args.count {
        case 1:
            let home = try home(context)
            (latitude, longitude, entities) = (home.latitude, home.longitude, args[0])
        case 2:
            guard let point = try resolve(args[0], context: context), let location = coordinates(point) else { return .none }
            (latitude, longitude, entities) = (location.0, location.1, args[1])
        case 3...:
            guard let lat = Conversions.float(args[0]), let lon = Conversions.float(args[1]) else { return .none }
            (latitude, longitude, entities) = (lat, lon, args[2])
        default:
            throw EvaluationError("closest needs the entities to choose from")
        }
        var best: (TemplateValue, Double)?
        for entity in try Functions.expand([entities], states: context.states, zone: context.timeZone) {
            guard case .mapping(let state) = entity, let location = coordinates(state) else { continue }
            let metres = distance(location.0, location.1, latitude, longitude) ?? 0
            if best == nil || metres < best!.1 { best = (entity, metres) }
        }
        return best?.0 ?? .none
    }

    /// `closest` as a filter: the value is the entities, the arguments the point.
    static func closestFilter(_ value: TemplateValue, _ args: [TemplateValue], context: EvaluationContext) throws(EvaluationError) -> TemplateValue {
        try closest(args + [value], context: context)
    }

    /// An entity id or state object as a state object (nil for anything else or an id with no state).
    static func resolve(_ value: TemplateValue, context: EvaluationContext) throws(EvaluationError) -> TemplateMapping? {
        switch value {
        case .string(let id):
            guard let state = context.state(id), case .mapping(let object) = try TemplateEvaluator.entityObject(state, zone: context.timeZone) else { return nil }
            return object
        case .mapping(let object) where object["entity_id"] != nil && object["attributes"] != nil:
            return object
        default:
            return nil
        }
    }

    /// `latitude` and `longitude` attributes that are numbers (Python's int or float), else nil.
    static func coordinates(_ state: TemplateMapping) -> (Double, Double)? {
        guard case .mapping(let attributes)? = state["attributes"] else { return nil }
        func number(_ key: String) -> Double? {
            switch attributes[key] {
            case .int(let i)?: return Double(i)
            case .double(let d)?: return d
            case .bool(let b)?: return b ? 1 : 0
            default: return nil
            }
        }
        guard let latitude = number("latitude"), let longitude = number("longitude") else { return nil }
        return (latitude, longitude)
    }

    /// Home: the context's (the daemon's, from Home Assistant's configuration), else `zone.home`'s attributes, which
    /// Home Assistant keeps at the configured location (shown in kilometres then, the metric system's length).
    static func home(_ context: EvaluationContext) throws(EvaluationError) -> Home {
        if let home = context.home { return home }
        if let zone = context.state("zone.home"), case .mapping(let object) = try TemplateEvaluator.entityObject(zone, zone: context.timeZone),
           let location = coordinates(object) {
            return Home(latitude: location.0, longitude: location.1, miles: false)
        }
        throw EvaluationError("where home is is not known: zone.home has no latitude and longitude")
    }

    /// Metres to the installation's unit, as `UnitSystem.length(…, METERS)` converts: (m / 1) × (1 / unit in m).
    static func length(_ metres: Double, context: EvaluationContext) -> Double {
        let miles = context.home?.miles ?? false
        let inch = 0.0254, foot = inch * 12, yard = foot * 3, mile = yard * 1760
        return (metres / 1) * (miles ? 1 / mile : 1 / 1000.0)
    }

    /// `location.distance`: metres between two points, as round(Vincenty in km, 6) × 1000; nil when it does not converge.
    static func distance(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double? {
        vincenty(lat1, lon1, lat2, lon2).map { $0 * 1000 }
    }

    static let axisA = 6378137.0
    static let flattening = 1 / 298.257223563
    static let axisB = 6356752.314245

    /// Vincenty's inverse formula in kilometres, rounded to 6 decimals as Python's round (util/location.py).
    static func vincenty(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double? {
        if lat1 == lat2 && lon1 == lon2 { return 0 }
        func radians(_ degrees: Double) -> Double { degrees * (Double.pi / 180) }
        let u1 = atan((1 - flattening) * tan(radians(lat1)))
        let u2 = atan((1 - flattening) * tan(radians(lat2)))
        let l = radians(lon2 - lon1)
        var lambda = l
        let sinU1 = sin(u1), cosU1 = cos(u1), sinU2 = sin(u2), cosU2 = cos(u2)
        var converged = false
        var sinSigma = 0.0, cosSigma = 0.0, sigma = 0.0, cosSqAlpha = 0.0, cos2SigmaM = 0.0
        for _ in 0..<200 {
            let sinLambda = sin(lambda), cosLambda = cos(lambda)
            sinSigma = ((cosU2 * sinLambda) * (cosU2 * sinLambda)
                + (cosU1 * sinU2 - sinU1 * cosU2 * cosLambda) * (cosU1 * sinU2 - sinU1 * cosU2 * cosLambda)).squareRoot()
            if sinSigma == 0 { return 0 }
            cosSigma = sinU1 * sinU2 + cosU1 * cosU2 * cosLambda
            sigma = atan2(sinSigma, cosSigma)
            let sinAlpha = cosU1 * cosU2 * sinLambda / sinSigma
            cosSqAlpha = 1 - sinAlpha * sinAlpha
            cos2SigmaM = cosSqAlpha == 0 ? 0 : cosSigma - 2 * sinU1 * sinU2 / cosSqAlpha
            let c = flattening / 16 * cosSqAlpha * (4 + flattening * (4 - 3 * cosSqAlpha))
            let previous = lambda
            lambda = l + (1 - c) * flattening * sinAlpha * (sigma + c * sinSigma * (cos2SigmaM + c * cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM)))
            if abs(lambda - previous) < 1e-12 {
                converged = true
                break
            }
        }
        guard converged else { return nil }
        let uSq = cosSqAlpha * (axisA * axisA - axisB * axisB) / (axisB * axisB)
        let a = 1 + uSq / 16384 * (4096 + uSq * (-768 + uSq * (320 - 175 * uSq)))
        let b = uSq / 1024 * (256 + uSq * (-128 + uSq * (74 - 47 * uSq)))
        let deltaSigma = b * sinSigma * (cos2SigmaM + b / 4 * (cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM)
            - b / 6 * cos2SigmaM * (-3 + 4 * sinSigma * sinSigma) * (-3 + 4 * cos2SigmaM * cos2SigmaM)))
        var s = axisB * a * (sigma - deltaSigma)
        s /= 1000
        return Rounding.round(s, precision: 6, method: "common")
    }
}
