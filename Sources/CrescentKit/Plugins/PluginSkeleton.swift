import Services
#if canImport(Glibc)
import Glibc
#endif

/// `crescent plugin new NAME --lua|--process [DIR]`: a plugin folder that loads and works with no
/// edits, to start from.
public enum PluginSkeleton {
    /// Checks a new plugin's name (`[a-z][a-z0-9_]*`), suggesting the name it likely meant
    /// (`Foo`: did you mean 'foo'?).
    public static func checkName(_ name: String) throws(PluginProblem) {
        guard !PluginNames.isValid(name) else { return }
        let cleaned = String(name.lowercased().map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" }.drop { !$0.isLetter })
        let suggestion = PluginNames.isValid(cleaned) ? "; did you mean '\(cleaned)'?" : ""
        throw PluginProblem("the plugin name must match \(PluginNames.rule), got \(PluginNames.shown(name))\(suggestion)")
    }

    /// Writes the skeleton of plugin `name` into `folder` (made when missing; existing files are
    /// never overwritten). Returns the files written. `builtins` are the builtin services, whose
    /// names the skeleton's service cannot take.
    public static func write(name: String, process: Bool, folder: String, builtins: [String] = []) throws(PluginProblem) -> [String] {
        try checkName(name)
        guard !builtins.contains(name) else {
            throw PluginProblem("'\(name)' is the name of a builtin service, which a plugin cannot provide again; choose another name")
        }
        Folders.make(folder, mode: 0o755)
        let files = process
            ? [("plugin.toml", manifest(name, kind: "command = [\"python3\", \"main.py\"]", process: true)), ("main.py", python(name))]
            : [("plugin.toml", manifest(name, kind: "main = \"main.lua\"", process: false)), ("main.lua", lua(name))]
        for (file, _) in files where access(folder + "/" + file, F_OK) == 0 {
            throw PluginProblem("\(folder)/\(file) exists already; choose another folder")
        }
        var written: [String] = []
        for (file, text) in files {
            let target = folder + "/" + file
            guard let handle = fopen(target, "w") else { throw PluginProblem("cannot write \(target): \(String(cString: strerror(errno)))") }
            fputs(text, handle)
            fclose(handle)
            written.append(target)
        }
        return written
    }

    private static func manifest(_ name: String, kind: String, process: Bool) -> String {
        """
        name = "\(name)"
        version = "0.1.0"
        crescent = ">=\(CrescentVersion.current), <1.0.0"
        description = "Says hello (a skeleton to start from)."
        kind = "\(process ? "process" : "lua")"
        \(kind)
        services = ["\(name)"]
        requires = []

        [settings.greeting]
        type = "string"
        default = "hello"
        doc = "What hello() says."

        """
    }

    private static func lua(_ name: String) -> String {
        """
        -- The \(name) plugin: runs in its own Lua VM; `settings` holds its [\(name)] section.
        local svc = service("\(name)", "Says hello (a skeleton to start from).")
        local count = 0
        svc:property("count", "integer", "How many greetings so far.", 0)
        svc:event("didGreet", "{ name }", "Someone was greeted.")
        svc:method("hello", { "name: string" }, "string", "Greets `name`.", function(name)
          if name == "" then error(service_error("invalid_argument", "name is empty")) end
          count = count + 1
          svc:set("count", count)
          svc:emit("didGreet", { name = name })
          return settings.greeting .. ", " .. name
        end)

        """
    }

    private static func python(_ name: String) -> String {
        """
        #!/usr/bin/env python3
        \"\"\"The \(name) plugin: JSON-RPC 2.0 on stdin/stdout, one object per line (Python 3 stdlib only).\"\"\"
        import json
        import sys

        settings = {}
        count = 0


        def send(message):
            sys.stdout.write(json.dumps(message) + "\\n")
            sys.stdout.flush()


        def notify(method, params):
            send({"jsonrpc": "2.0", "method": method, "params": params})


        def initialize(params):
            settings.update(params.get("settings") or {})
            return {"services": [{
                "name": "\(name)",
                "summary": "Says hello (a skeleton to start from).",
                "properties": [{"name": "count", "type": "integer", "doc": "How many greetings so far.", "value": 0}],
                "methods": [{"name": "hello", "args": [{"name": "name", "type": "string", "doc": "Who to greet."}],
                             "returns": "string", "doc": "Greets name."}],
                "events": [{"name": "didGreet", "payload": "{ name }", "doc": "Someone was greeted."}],
            }]}


        class ServiceError(Exception):
            def __init__(self, code, message):
                super().__init__(message)
                self.code = code


        def call(params):
            global count
            if params.get("method") != "hello":
                raise ServiceError("invalid_argument", "no method " + str(params.get("method")))
            name = params["args"][0]
            if name == "":
                raise ServiceError("invalid_argument", "name is empty")
            count += 1
            notify("set", {"service": "\(name)", "property": "count", "value": count})
            notify("emit", {"service": "\(name)", "event": "didGreet", "payload": {"name": name}})
            return settings.get("greeting", "hello") + ", " + name


        def main():
            # The host closes stdin when it goes (even when killed): then exit.
            for line in sys.stdin:
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                method, id = message.get("method"), message.get("id")
                if method == "shutdown":
                    break
                if id is None:
                    continue  # notifications: cancel (every call here answers at once)
                try:
                    if method == "initialize":
                        result = initialize(message.get("params") or {})
                    elif method == "call":
                        result = call(message.get("params") or {})
                    else:
                        raise ServiceError("invalid_argument", "unknown method " + str(method))
                    send({"jsonrpc": "2.0", "id": id, "result": result})
                except ServiceError as error:
                    send({"jsonrpc": "2.0", "id": id, "error": {"code": -32000, "message": str(error), "data": {"code": error.code}}})


        if __name__ == "__main__":
            main()

        """
    }
}
