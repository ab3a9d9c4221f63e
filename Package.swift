// swift-tools-version: 6.1
import PackageDescription

// make sanitize's ThreadSanitizer build (CRESCENT_SANITIZER=thread) defines THREAD_SANITIZER, under
// which each module's `Mutex` is Model's SanitizedMutex (why there). Its members come from Model,
// which not every file using a `Mutex` imports, so MemberImportVisibility is left to the other
// builds, which check it.
let threadSanitizer = Context.environment["CRESCENT_SANITIZER"] == "thread"
let upcoming: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
] + (threadSanitizer ? [.define("THREAD_SANITIZER")] : [.enableUpcomingFeature("MemberImportVisibility")])

// C++'s runtime, SQLite and Lua linked into the binary instead of loaded at every start (libstdc++
// and libgcc_s were two of the seven libraries the loader mapped and bound, for ICU and the Swift
// runtime; Debian builds libsqlite3 with BIND_NOW, so every start resolved its 1,290 symbol
// references, a seventh of `crescent -e ''`, for a store most runs never open; liblua's 185
// functions were bound on their first calls, and every call went through the PLT): tools/setup.sh
// (make's setup) links GCC's libstdc++.a and Debian's libsqlite3.a into .build-static, searched
// before the system folders, which also hold the shared libraries, and joins liblua5.4.a into one
// object there. The binary exports Lua's API (CLua/lua-exports.list) for the C modules scripts
// require, which take it from the process. Without those files the shared libraries are used.
//
// Under a sanitizer (make sanitize sets CRESCENT_SANITIZER for its builds) libgcc stays shared. The
// test binary's main thread ends in pthread_exit (Swift Testing's async main, in dispatch_main),
// whose forced unwind runs in glibc's libgcc_s. ThreadSanitizer gives every instrumented Swift
// function a cleanup with libgcc's personality routine, and a statically linked libgcc put its own
// copy of that routine in the binary, which cannot read libgcc_s's unwind context and aborts: every
// test binary stopped before its first test.
let staticLibgcc = Context.environment["CRESCENT_SANITIZER"] == nil ? ["-Xclang-linker", "-static-libgcc"] : []
let staticCxxRuntime: [LinkerSetting] = [
    .unsafeFlags(["-L\(Context.packageDirectory)/.build-static"] + staticLibgcc
                 + ["-Xlinker", "--dynamic-list=\(Context.packageDirectory)/CLua/lua-exports.list"], .when(platforms: [.linux])),
]

let package = Package(
    name: "Crescent",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "crescent", targets: ["crescent"]),
        .library(name: "CrescentKit", targets: ["CrescentKit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
    ],
    targets: [
        // System Lua 5.4 from Debian's liblua5.4-dev. Its headers are named with their folder
        // (lua5.4/lua.h) rather than found through pkg-config, whose `-L` of the system library
        // folder would come first on the link line and hide .build-static's archives.
        .systemLibrary(
            name: "CLuaSystem",
            path: "CLua/System",
            providers: [.apt(["liblua5.4-dev"])]
        ),
        // zlib from Debian's zlib1g-dev: the CRC-32 the geocoder checks its data file with.
        .systemLibrary(
            name: "CZlib",
            path: "CZlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // The C shim: trampoline, macro wrappers, protected helpers, hook, allocator.
        .target(
            name: "CLua",
            dependencies: ["CLuaSystem", "CDescriptors", "CExitGuard"],
            path: "CLua/Shim",
            linkerSettings: [.linkedLibrary("lua5.4")]
        ),
        // The system calls that touch no Lua and that Swift's Glibc module cannot make or that
        // must be plain C: output through C stdio, the terminal given back from a signal
        // handler, malloc's tuning, the bench's processor affinity.
        .target(
            name: "CPlatform",
            dependencies: ["CExitGuard"],
            path: "CPlatform"
        ),
        // The child side of a confined process plugin (fork, Landlock, seccomp, namespaces, exec),
        // in C because Swift cannot run between fork and exec.
        .target(
            name: "CSandbox",
            path: "CSandbox"
        ),
        // The descriptors kept for the host's own libraries, which scripts, plugins, remote
        // clients and the programs and watchers scripts start may not take.
        .target(
            name: "CDescriptors",
            path: "CDescriptors"
        ),
        // What a fatal signal (a crash, SIGQUIT, SIGXCPU, ...) undoes before the process dies of
        // it: the programs' process groups killed, the terminal given back; in C because a signal
        // handler may call only async-signal-safe functions.
        .target(
            name: "CExitGuard",
            path: "CExitGuard"
        ),
        .target(
            name: "LuaBridge",
            dependencies: ["CLua"],
            swiftSettings: upcoming
        ),
        .target(
            name: "Model",
            swiftSettings: upcoming
        ),
        // The standard service plugins, one folder each. Imports Model, never LuaBridge.
        .target(
            name: "Services",
            dependencies: [
                "Model",
                // The confined child of a process plugin: spawned through ProcessLauncher, the
                // one home for starting programs.
                "CSandbox",
                "CDescriptors",
                // The process groups, killed from a fatal signal's handler.
                "CExitGuard",
                // The geocoder data file's checksum.
                "CZlib",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API, for the store's write-ahead log hook.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            // The geocoder's GeoNames places (tools/fetch-geonames.sh makes the file).
            resources: [.copy("Geocoder/Resources/places.cgeo")],
            swiftSettings: upcoming
        ),
        .target(
            name: "CrescentKit",
            dependencies: [
                "LuaBridge", "Model", "Services", "LineEditing", "CLua", "CPlatform", "CSandbox", "CDescriptors",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Mustache", package: "swift-mustache"),
            ],
            resources: [
                .embedInCode("Prelude/inspect.lua"),
                .embedInCode("Prelude/json.lua"),
                .embedInCode("Prelude/marks.lua"),
                .embedInCode("Prelude/controllers.lua"),
                .embedInCode("Prelude/controllers_mistakes.lua"),
                .embedInCode("Prelude/controllers_navigation.lua"),
                .embedInCode("Prelude/controllers_commands.lua"),
                .embedInCode("Prelude/controllers_keys.lua"),
                .embedInCode("Prelude/controllers_helpers.lua"),
                .embedInCode("Prelude/controllers_firstuse.lua"),
                .embedInCode("Prelude/models.lua"),
                .embedInCode("Prelude/assertions.lua"),
                .embedInCode("Prelude/checks.lua"),
                .embedInCode("Prelude/doubles.lua"),
                .embedInCode("Prelude/fakes.lua"),
                .embedInCode("Prelude/coverage.lua"),
                .embedInCode("Prelude/environments.lua"),
                .embedInCode("Prelude/testing.lua"),
                .embedInCode("Prelude/testing_choice.lua"),
                .embedInCode("Prelude/testing_walk.lua"),
                .embedInCode("Prelude/testing_run.lua"),
                .embedInCode("Prelude/testing_app.lua"),
                .embedInCode("Prelude/firstuse.lua"),
                .embedInCode("Prelude/change.lua"),
                .embedInCode("Prelude/services.lua"),
                .embedInCode("Prelude/time.lua"),
                .embedInCode("Prelude/latest.lua"),
                .embedInCode("Prelude/output.lua"),
                .embedInCode("Prelude/plugin.lua"),
            ],
            swiftSettings: upcoming,
            // Their bytecode, which a host loads instead of compiling the sources at every start,
            // made by the build from the sources (Plugins/PreludeCompiler).
            plugins: ["PreludeCompiler"]
        ),
        .plugin(name: "PreludeCompiler", capability: .buildTool(), path: "Plugins/PreludeCompiler"),
        // The line editor: a pure editing state, history and a terminal renderer (the REPL itself,
        // which runs chunks on the host's loop, is CrescentKit/Interactive).
        .target(
            name: "LineEditing",
            swiftSettings: upcoming
        ),
        .executableTarget(
            name: "crescent",
            dependencies: [
                "CrescentKit", "Model",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: upcoming,
            linkerSettings: staticCxxRuntime
        ),
        // A real HTTP server on 127.0.0.1 answering from a closure: the http tests' and bench's peer.
        .target(
            name: "HTTPTestServer",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Tests/HTTPTestServer",
            swiftSettings: upcoming
        ),
        .executableTarget(
            name: "crescent-bench",
            dependencies: [
                "CrescentKit", "LuaBridge", "CLua", "CPlatform", "Model", "Services", "HTTPTestServer", "PostgresTestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: upcoming
        ),
        .testTarget(name: "LuaBridgeTests", dependencies: ["LuaBridge", "CLua"], swiftSettings: upcoming),
        .testTarget(name: "ModelTests", dependencies: ["Model"], swiftSettings: upcoming),
        .testTarget(name: "LineEditingTests", dependencies: ["LineEditing"], swiftSettings: upcoming),
        // Programs a test starts, waited for by their pid: the one home for the tests' children.
        .target(
            name: "ChildTestSupport",
            path: "Tests/ChildTestSupport",
            swiftSettings: upcoming
        ),
        // A throwaway PostgreSQL cluster (initdb, pg_ctl) for the store's tests and bench.
        .target(
            name: "PostgresTestSupport",
            dependencies: ["ChildTestSupport"],
            path: "Tests/PostgresTestSupport",
            swiftSettings: upcoming
        ),
        // Feed documents and a loopback server serving them, for the feeds tests of two targets.
        .target(
            name: "FeedTestSupport",
            dependencies: ["HTTPTestServer"],
            path: "Tests/FeedTestSupport",
            swiftSettings: upcoming
        ),
        .testTarget(
            name: "ServicesTests",
            dependencies: ["Services", "Model", "HTTPTestServer", "FeedTestSupport", "PostgresTestSupport", .product(name: "AsyncHTTPClient", package: "async-http-client")],
            swiftSettings: upcoming
        ),
        .testTarget(
            name: "CrescentKitTests",
            dependencies: ["CrescentKit", "LuaBridge", "Services", "HTTPTestServer", .product(name: "NIOEmbedded", package: "swift-nio")],
            swiftSettings: upcoming
        ),
        .testTarget(name: "crescentTests", dependencies: ["crescent", "HTTPTestServer", "FeedTestSupport", "PostgresTestSupport", "ChildTestSupport",
                                                         .product(name: "ArgumentParser", package: "swift-argument-parser")],
                    swiftSettings: upcoming),
    ]
)

// The fuzz targets (`make fuzz`), only when CRESCENT_FUZZ is set. Only our own modules, where the
// parsers of outside input and the value conversion live, are instrumented for libFuzzer's coverage;
// the dependencies are not, so the fuzz build reuses the debug build's compiled dependencies and
// recompiles only our modules (libFuzzer provides `main`, hence -parse-as-library).
if Context.environment["CRESCENT_FUZZ"] != nil {
    let instrumented: Set<String> = ["Model", "Services", "LuaBridge", "CrescentKit"]
    for target in package.targets where instrumented.contains(target.name) {
        target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-sanitize=fuzzer"])]
    }
    package.targets.append(.executableTarget(
        name: "crescent-fuzz",
        dependencies: ["CrescentKit", "Services", "Model", "LuaBridge", "CLua", .product(name: "NIOEmbedded", package: "swift-nio")],
        path: "Fuzz/Sources/crescent-fuzz",
        swiftSettings: [.unsafeFlags(["-sanitize=fuzzer", "-parse-as-library"])],
        linkerSettings: [.unsafeFlags(["-sanitize=fuzzer"])]
    ))
    package.products.append(.executable(name: "crescent-fuzz", targets: ["crescent-fuzz"]))
}
