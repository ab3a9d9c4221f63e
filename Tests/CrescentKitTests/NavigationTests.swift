import CrescentKit
import Testing

/// Routing, commands and the navigation API.
@Suite struct NavigationTests {
    @Test func routesPushWithParameters() throws {
        let test = try TestHost()
        test.run("""
            local Goods = controller("Goods")
            function Goods:init(args) print("goods", args.id, args.tab) end
            app.route("goods/:id", Goods)
            app.open("goods/42", { tab = "reviews" })
            print(select(2, pcall(app.open, "nowhere")))
            timer.after(0.1, function() app.exit(0) end)
            """)
        test.advance(seconds: 1)
        #expect(test.lines == ["goods\t42\treviews", "app.open: no route matches 'nowhere' (routes: goods/:id)"])
    }

    @Test func commandsReachTheTopController() throws {
        let test = try TestHost()
        test.run("""
            local List = controller("List")
            function List:viewDidLoad()
              self:command("add", "addItem", "add ITEM")
            end
            function List:addItem(item, count) print("adding", item, count) end
            app.push(List)
            """)
        test.host.receiveCommandLine(#"add "oat milk" 2"#)
        test.host.receiveCommandLine("add")
        test.host.receiveCommandLine("bogus")
        test.host.receiveCommandLine("")
        test.settle()
        #expect(test.lines == ["adding\toat milk\t2", "adding\tnil\tnil"])
        #expect(test.stderr.contains("crescent: unknown command 'bogus'; commands of List:"))
        #expect(test.stderr.contains("add   add ITEM"))
        #expect(test.exitStatus == nil, "an unknown command does not end the run")
        test.host.receiveCommandLine("quit")
        test.host.endTurn()   // the runner ends the turn after each line
        #expect(test.exitStatus == 0)
    }

    @Test func commandMethodsAreTasksThatCanAwait() throws {
        let thermostat = Thermostat()
        let test = try TestHost(thermostat: thermostat)
        test.run("""
            local C = controller("C")
            function C:viewDidLoad() self:command("set", "setTo") end
            function C:setTo(value)
              local result, err = services.thermostat:set(tonumber(value))
              print("set", result, err and err.code)
            end
            app.push(C)
            timer.after(1, function() app.send("set", "300") end)
            app.send("set", "21")
            """)
        test.settle()
        test.advance(seconds: 2)
        test.settle()
        #expect(test.lines == ["set\t21.0\tnil", "set\tnil\tinvalid_argument"])
    }

    @Test func badUsesSayWhatToDo() throws {
        let test = try TestHost()
        test.run("""
            local C = controller("C")
            print(select(2, pcall(controller, 42)))
            print(select(2, pcall(controller, "X", {})))
            print(select(2, pcall(app.push, {})))
            print(select(2, pcall(function() C:command("go", "missing") end)))
            """)
        #expect(test.lines == [
            "bad argument #1 to 'controller' (name must be a non-empty string)",
            "bad argument #2 to 'controller' (base must be a class made by controller(...), got table)",
            "app.push: expected a controller class or instance, got table",
            "test.lua:5: self:command(name, method[, help][, options]): call it on an instance, as self:command(...) in viewDidLoad, "
                + "not on the class C",
        ])
    }
}
