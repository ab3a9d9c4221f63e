-- Compiles the prelude's modules to the bytecode a release host loads (make prelude):
-- Sources/CrescentKit/Prelude/Compiled/NAME.luac is string.dump of NAME.lua loaded under the
-- chunk name the host gives it, debug information kept (error messages and tracebacks name
-- `[crescent NAME]:LINE` as before). PreludeTests fails when a file is not the dump of its source.
-- Run with the lua5.4 of the liblua5.4 the binary links: the bytecode is that release's.
local folder = arg[1] or "Sources/CrescentKit/Prelude"
for _, name in ipairs({ "inspect", "marks", "json", "models", "controllers", "assertions", "testing", "firstuse",
                         "change", "services", "time", "latest", "output", "plugin" }) do
    local input = assert(io.open(folder .. "/" .. name .. ".lua", "rb"))
    local source = input:read("a")
    input:close()
    local chunk = assert(load(source, "=[crescent " .. name .. "]", "t"))
    local output = assert(io.open(folder .. "/Compiled/" .. name .. ".luac", "wb"))
    output:write(string.dump(chunk))
    output:close()
end
