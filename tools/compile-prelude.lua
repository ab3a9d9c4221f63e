-- Compiles the prelude's modules to the bytecode a host loads, at build time (the PreludeCompiler
-- build-tool plugin runs it): lua5.4 tools/compile-prelude.lua OUTPUT.swift MODULE.lua ...
-- Each module is loaded under the chunk name the host gives it, `=[crescent NAME]`, debug
-- information kept (error messages and tracebacks name `[crescent NAME]:LINE`), and dumped with
-- string.dump; OUTPUT.swift holds the dumps as `Prelude.Bytecode.NAME`, one byte array each.
-- Run with the lua5.4 of the liblua5.4 the binary links: the bytecode is that release's.
local output_path = assert(arg[1], "usage: lua5.4 compile-prelude.lua OUTPUT.swift MODULE.lua ...")
local parts = {
    "// Generated at build time by tools/compile-prelude.lua (the PreludeCompiler plugin); do not edit.",
    "extension Prelude {",
    "    /// Each module's bytecode, compiled from Prelude/NAME.lua by the build.",
    "    enum Bytecode {",
}
for index = 2, #arg do
    local path = arg[index]
    local name = assert(path:match("([%w_]+)%.lua$"), "not a Lua module: " .. path)
    local input = assert(io.open(path, "rb"))
    local source = input:read("a")
    input:close()
    local chunk = assert(load(source, "=[crescent " .. name .. "]", "t"))
    local bytes = string.dump(chunk)
    local lines = {}
    for start = 1, #bytes, 24 do
        local row = { bytes:byte(start, math.min(start + 23, #bytes)) }
        lines[#lines + 1] = "            " .. table.concat(row, ", ") .. ","
    end
    parts[#parts + 1] = "        static let " .. name .. ": [UInt8] = ["
    parts[#parts + 1] = table.concat(lines, "\n")
    parts[#parts + 1] = "        ]"
end
parts[#parts + 1] = "    }"
parts[#parts + 1] = "}"
local output = assert(io.open(output_path, "wb"))
output:write(table.concat(parts, "\n"), "\n")
output:close()
