/// LiveBridge's version: what `livebridge --version` prints and requests carry as `User-Agent: livebridge/<version>`.
/// Kept equal to the add-on's `version:` in config/homeassistant-addon/config.yaml (a test checks).
public enum LiveBridgeVersion {
    public static let current = "0.1.0"
}
