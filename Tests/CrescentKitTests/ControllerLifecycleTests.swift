import CrescentKit
import Testing

/// DESIGN.md "Controllers": the lifecycle order for push, pop, replace and children, and teardown.
@Suite struct ControllerLifecycleTests {
    private func run(_ source: String, advance: Double = 1) throws -> TestHost {
        let test = try TestHost()
        test.run(ControllerScripts.traced + source)
        test.advance(seconds: advance)
        return test
    }

    @Test func pushThenPushThenPop() throws {
        let test = try run("""
            local A, B = traced("A"), traced("B")
            app.push(A)
            app.push(B)
            timer.after(0.1, function() app.pop() end)
            """)
        #expect(test.lines == [
            "A:init", "A:loadView", "A:viewDidLoad", "A:viewWillAppear", "A:viewDidAppear",
            "B:init", "B:loadView", "B:viewDidLoad", "A:viewWillDisappear", "B:viewWillAppear",
            "A:viewDidDisappear", "B:viewDidAppear",
            "B:viewWillDisappear", "A:viewWillAppear", "B:viewDidDisappear", "A:viewDidAppear", "B:dealloc",
        ])
        #expect(test.exitStatus == nil, "A is still on the stack")
    }

    @Test func popTheLastControllerEndsTheRun() throws {
        let test = try run("""
            local A = traced("A")
            app.push(A)
            timer.after(0.1, function() app.pop() end)
            """)
        #expect(test.lines.suffix(3) == ["A:viewWillDisappear", "A:viewDidDisappear", "A:dealloc"])
        #expect(test.exitStatus == 0)
    }

    @Test func replaceSwapsTheTop() throws {
        let test = try run("""
            local A, B = traced("A"), traced("B")
            app.push(A)
            timer.after(0.1, function() app.replace(B) end)
            timer.after(0.2, function() print("top", tostring(app.top):match("^B") ~= nil, #app.stack) end)
            """)
        #expect(Array(test.lines.dropFirst(5)) == [
            "B:init", "B:loadView", "B:viewDidLoad", "A:viewWillDisappear", "B:viewWillAppear",
            "A:viewDidDisappear", "B:viewDidAppear", "A:dealloc", "top\ttrue\t1",
        ])
    }

    @Test func childrenFollowTheirParentsAppearance() throws {
        let test = try run("""
            local Child, Grand = traced("Child"), traced("Grand")
            local Parent = traced("Parent", nil, function()
              return view.stack{ view.text("parent"), view.slot{ id = "main" } }
            end)
            local parent
            function Parent:viewDidLoad()
              print("Parent:viewDidLoad")
              local child = self:addChild(Child)
              child:addChild(Grand)
            end
            parent = app.push(Parent)
            timer.after(0.1, function() print("--") parent:removeChild(parent.children[1]) print(#parent.children) end)
            timer.after(0.2, function() print("--") app.exit(0) end)
            """)
        #expect(test.lines == [
            "Parent:init", "Parent:loadView", "Parent:viewDidLoad",
            "Child:init", "Child:loadView", "Child:viewDidLoad", "Grand:init", "Grand:loadView", "Grand:viewDidLoad",
            "Parent:viewWillAppear", "Child:viewWillAppear", "Grand:viewWillAppear",
            "Parent:viewDidAppear", "Child:viewDidAppear", "Grand:viewDidAppear",
            "parent",
            "--",
            "Child:viewWillDisappear", "Grand:viewWillDisappear", "Grand:viewDidDisappear", "Child:viewDidDisappear",
            "Grand:dealloc", "Child:dealloc", "0",
            "--",
            "Parent:viewWillDisappear", "Parent:viewDidDisappear", "Parent:dealloc",
        ])
        #expect(test.exitStatus == 0)
    }

    @Test func appExitTearsDownEveryVisibleController() throws {
        let test = try run("""
            local A, B = traced("A"), traced("B")
            app.push(A)
            app.push(B)
            timer.after(0.1, function() print("--") app.exit(4) end)
            """)
        #expect(Array(test.lines.drop { $0 != "--" }) == [
            "--", "B:viewWillDisappear", "B:viewDidDisappear", "B:dealloc", "A:dealloc",
        ])
        #expect(test.exitStatus == 4)
    }

    @Test func derivationInheritsAndCallsTheBase() throws {
        let test = try run("""
            local Base = controller("Base")
            function Base:viewDidLoad() print("base loaded", self.kind) end
            function Base:greet() return "hello from base" end
            local Detail = controller("Detail", Base)
            function Detail:init() self.kind = "detail" end
            function Detail:viewDidLoad() Base.viewDidLoad(self) print("detail loaded", self:greet()) end
            app.push(Detail)
            timer.after(0.1, function() app.exit(0) end)
            """)
        #expect(test.lines == ["base loaded\tdetail", "detail loaded\thello from base"])
    }

    @Test func lifecycleMethodsRunAsTasksAndWaitInOrder() throws {
        let test = try run("""
            local Slow = controller("Slow")
            function Slow:viewDidLoad() print("loading") sleep(0.5) print("loaded") end
            function Slow:viewWillAppear() print("appearing") end
            app.push(Slow)
            timer.after(0.8, function() app.exit(0) end)
            """)
        #expect(test.lines == ["loading", "loaded", "appearing"])
    }

    @Test func anErrorInACallbackIsReportedAndTheTransitionGoesOn() throws {
        let test = try run("""
            local Broken = controller("Broken")
            function Broken:viewDidLoad() error("no view today") end
            function Broken:viewDidAppear() print("appeared anyway") end
            app.push(Broken)
            timer.after(0.1, function() app.exit() end)
            """)
        #expect(test.lines == ["appeared anyway"])
        #expect(test.stderr.contains("error in Broken:viewDidLoad"))
        #expect(test.stderr.contains("no view today"))
    }
}
