extension Duration {
    /// Whole milliseconds, rounded toward zero (libcurl's and the logs' unit).
    public var wholeMilliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }

    /// Whole microseconds, rounded toward zero (libwebsockets' timer unit).
    public var wholeMicroseconds: Int64 { components.seconds * 1_000_000 + components.attoseconds / 1_000_000_000_000 }

    /// Whole nanoseconds, rounded toward zero (the monotonic clock's unit); traps past Int64 nanoseconds (292 years).
    public var wholeNanoseconds: Int64 { components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000 }

    /// Seconds as a Double, for metrics and figures.
    public var secondsValue: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
