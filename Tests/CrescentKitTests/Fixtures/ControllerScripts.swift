/// Lua shared by the controller tests: `traced(name)` makes a controller class that prints every
/// lifecycle call as `Name:method`.
enum ControllerScripts {
    static let traced = """
        local lifecycle = { "init", "loadView", "viewDidLoad", "viewWillAppear", "viewDidAppear",
                            "viewWillDisappear", "viewDidDisappear", "dealloc" }
        function traced(name, base, makeView)
          local class = controller(name, base)
          for _, method in ipairs(lifecycle) do
            class[method] = function(self, ...)
              print(name .. ":" .. method)
              if method == "loadView" and makeView then return makeView(self) end
            end
          end
          return class
        end

        """
}
