import ArgumentParser
import CrescentKit
import Foundation
import Model

/// `crescent init [DIR]`: a new project a newcomer can run and test at once.
struct InitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Write a new project: crescent.toml, a main.lua controller, a passing spec/main_spec.lua, stubs and .luarc.json.",
        discussion: """
            Then: cd DIR && crescent test && crescent main.lua. Existing files are never overwritten: \
            an existing .luarc.json keeps your settings and gets Crescent's added (see crescent stubs).
            """
    )

    @Argument(help: ArgumentHelp("The project folder (created if missing; . is the current folder).", valueName: "dir"))
    var directory = "."

    func validate() throws {
        if directory.isEmpty { throw ValidationError("the project folder is empty; name a folder (. for the current one)") }
    }

    func run() throws {
        let manager = FileManager.default
        let root = directory
        let files = ProjectTemplate.files.map { (path: (root as NSString).appendingPathComponent($0.path), text: $0.text) }
        let stubs: StubsPlan
        do throws(ProjectFiles.Failure) {
            let entries: [ServiceEntry]
            do throws(HostSetupError) {
                entries = try ServiceFactory.entries(plugins: [.standard], options: HostOptions())
            } catch {
                Crescent.fail("cannot describe the services for the stubs: \(error.description)")
            }
            stubs = try StubsPlan(entries: entries, folder: (root as NSString).appendingPathComponent("types"))
        } catch {
            Crescent.fail(error.description)
        }
        // Nothing is written while anything would be overwritten.
        let clashes = files.map(\.path).filter { manager.fileExists(atPath: $0) }
        // Refusals for the files there, not the command line: exit 1 without a usage line.
        if !clashes.isEmpty {
            Crescent.fail("not overwriting \(clashes.joined(separator: ", ")); choose an empty folder")
        }
        if !stubs.refusals.isEmpty { Crescent.fail(stubs.refusals.joined(separator: "; ")) }
        do throws(ProjectFiles.Failure) {
            for file in files { try ProjectFiles.write(file.text, to: file.path) }
            _ = try stubs.write()
        } catch {
            Crescent.fail(error.description)
        }
        let cd = root == "." ? "" : "cd \(root) && "
        ProcessIO.writeOut("""
            Wrote a Crescent project in \(root):
              crescent.toml        settings (a fixed location, so main.lua runs anywhere)
              main.lua             a controller: where you are, from the location and geocoder services
              spec/main_spec.lua   its tests, in virtual time with a fake location
              types/, .luarc.json  annotations for LuaLS (crescent stubs rewrites them)
            Next: \(cd)crescent test && crescent main.lua

            """)
    }
}

/// The files of a new project.
enum ProjectTemplate {
    static let files: [(path: String, text: String)] = [
        ("crescent.toml", """
            # Crescent's settings for this project (crescent services NAME documents each service).

            [location]
            # Where fixes come from: gpsd (the default, gpsd:HOST:PORT), nmea:FILE, gpx:FILE@60x,
            # or one fixed point. Tests ignore it: specs use fake.location.
            provider = "fixed:48.8566,2.3522"

            [store]
            # path = "store.sqlite"   # default: ~/.local/share/crescent/store.sqlite; tests use memory

            """),
        ("main.lua", """
            -- main.lua: a controller. The location service owns the position, the geocoder names it;
            -- the controller only coordinates and shows. Run: crescent main.lua. On a terminal, press r
            -- to look the place up again, ? for the keys, q to quit; from a pipe or `crescent send`,
            -- the same as commands: `refresh`, `quit`.
            local Place = controller("Place")

            function Place:loadView()
              return view.stack {
                view.text { id = "title", text = "Where am I?" },
                view.keyvalue { id = "place", pairs = { { "place", "waiting for a fix…" } } },
              }
            end

            function Place:viewDidLoad()
              self:key("r", "refresh", "refresh")
              self:command("refresh", "refresh", "look the place up again")
            end

            function Place:viewWillAppear()
              self:start(services.location)
              self:observe(services.location, "location", "show", { initial = false, latest = true })
            end

            -- Controller methods run as tasks: the geocoder's answer is awaited, no callback needed.
            function Place:show(fix)
              local placemarks, err = services.geocoder:reverse(fix)
              if err then return self.view.place:update({ { "error", tostring(err) } }) end
              local place = placemarks[1]
              self.view.place:update({
                { "place", ("%s, %s"):format(place.locality, place.country) },
                { "position", ("%.4f, %.4f"):format(fix.lat, fix.lon) },
              })
            end

            function Place:refresh()
              local fix = services.location.location
              if fix then self:show(fix) end
            end

            app.push(Place)

            """),
        ("spec/main_spec.lua", """
            -- Each `it` runs in a fresh host on a virtual clock: nothing waits in real time.
            -- Run: crescent test   (crescent test --filter again runs the tests whose name matches)
            describe("Place", function()
              it("waits for a fix", function()
                fake.location { fixes = { { lat = 51.5072, lon = -0.1276 } }, interval = 10 }
                script("main.lua")
                assert.matches("waiting for a fix", view_text())
              end)

              it("names the place of each fix", function()
                fake.location { fixes = { { lat = 51.5072, lon = -0.1276 }, { lat = 48.8566, lon = 2.3522 } }, interval = 60 }
                script("main.lua")
                clock.advance(0)                       -- the first fix, and the geocoder's answer
                assert.matches("London", view_text())
                clock.advance(60)                      -- the second fix
                assert.matches("Paris", view_text())
                assert.equals("Where am I?", app.top.view.title.text)
              end)

              it("looks the place up again on r", function()
                fake.location { fixes = { { lat = 51.5072, lon = -0.1276 } }, interval = 60 }
                script("main.lua")
                clock.advance(0)
                app.top.view.place:update({ { "place", "?" } })
                press("r")                             -- as on the terminal
                clock.advance(0)
                assert.matches("London", view_text())
                assert.matches("r refresh", screen_text())   -- the key hints on the status line
              end)
            end)

            """),
    ]
}
