extension Int {
    /// `value` rounded toward zero, or nil when it is NaN, infinite or beyond Int's range: `Int(_:)` would trap.
    @inlinable
    public init?(truncating value: Double) {
        // 2^63 is exact as a Double; every Double below it converts.
        guard value.isFinite, value > -9_223_372_036_854_775_809.0, value < 9_223_372_036_854_775_808.0 else { return nil }
        self.init(value.rounded(.towardZero))
    }

    /// `value` rounded toward zero and clamped to Int's range; NaN is 0. For figures shown to people (a percentage,
    /// a clock), where a wild input must still draw something rather than stop the process.
    @inlinable
    public init(saturating value: Double) {
        if value.isNaN { self = 0 } else if let exact = Int(truncating: value) { self = exact } else { self = value < 0 ? .min : .max }
    }
}
