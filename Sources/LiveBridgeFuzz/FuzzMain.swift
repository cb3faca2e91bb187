import FoundationEssentials
import FuzzTargets
import Glibc

// `make fuzz` builds this with -sanitize=fuzzer,address and -D LIVEBRIDGE_FUZZING: main hands over to libFuzzer,
// which calls LLVMFuzzerTestOneInput with the target named by LIVEBRIDGE_FUZZ_TARGET. Built without them, the program
// replays the files it is given through a target instead (`LiveBridgeFuzz TARGET FILE...`), to study a finding.

private let target: FuzzTarget = {
    guard let name = getenv("LIVEBRIDGE_FUZZ_TARGET").map({ String(cString: $0) }), let target = FuzzTarget(rawValue: name) else {
        fatalError("set LIVEBRIDGE_FUZZ_TARGET to one of: " + FuzzTarget.allCases.map(\.rawValue).joined(separator: ", "))
    }
    return target
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    target.run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    return 0
}

/// libFuzzer's driver, for a program with its own main (SwiftPM gives every executable one).
@_silgen_name("LLVMFuzzerRunDriver")
private func runFuzzerDriver(_ argc: UnsafeMutablePointer<Int32>,
                             _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                             _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32

@main
struct FuzzMain {
    static func main() {
        #if LIVEBRIDGE_FUZZING
        var argc = CommandLine.argc
        var argv = Optional(CommandLine.unsafeArgv)
        exit(runFuzzerDriver(&argc, &argv) { data, size in fuzzOneInput(data, size) })
        #else
        replay()
        #endif
    }

    static func replay() {
        let arguments = CommandLine.arguments.dropFirst()
        guard let name = arguments.first, let target = FuzzTarget(rawValue: name) else {
            print("usage: LiveBridgeFuzz " + FuzzTarget.allCases.map(\.rawValue).joined(separator: "|") + " FILE...")
            exit(2)
        }
        for path in arguments.dropFirst() {
            guard let data = FileManager.default.contents(atPath: path) else { print("cannot read \(path)"); exit(1) }
            target.run(Array(data))
        }
    }
}
