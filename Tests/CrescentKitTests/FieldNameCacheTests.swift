import CrescentKit
import Testing

/// Field names of converted tables are found again by their Lua string's address
/// (FieldNameCache): a name must never come back as another one, whatever the collector frees
/// and reuses in between.
@Suite struct FieldNameCacheTests {
    /// Far more distinct names than the cache has entries, over rounds with full collections in
    /// between, so entries are replaced and freed strings' memory is reused by new ones.
    @Test func namesSurviveReplacementAndCollection() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            local long = "a name longer than forty bytes, converted each time"
            task(function()
              local wrong = 0
              for round = 1, 4 do
                for i = 1, 1500 do
                  -- Short names are small Swift strings; from 16 bytes on, Swift keeps them in
                  -- storage that is freed and reused like the Lua strings.
                  local name = (i % 2 == 0 and "field" or "a field of medium length ") .. (i * 7 + round)
                  local copy = t:echo({ [name] = i, shared = round, [long] = -i })
                  local count = 0
                  for _ in pairs(copy) do count = count + 1 end
                  if copy[name] ~= i or copy.shared ~= round or copy[long] ~= -i or count ~= 3 then wrong = wrong + 1 end
                end
                collectgarbage()
                collectgarbage()
              end
              print(wrong)
            end)
            """)
        test.settle()
        #expect(test.lines == ["0"], "\(test.stderr)")
    }

    /// Two Lua keys that Swift deems one text (é composed and decomposed) become one field, and
    /// a key that is not UTF-8 is still refused.
    @Test func keysSwiftDeemsEqualBecomeOneField() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            t:echo({ ["\\u{E9}"] = 1, ["e\\u{301}"] = 1 }, function(copy)
              local count = 0
              for _ in pairs(copy) do count = count + 1 end
              print(count)
            end)
            t:echo({ ["\\xff"] = 1 }, function(copy, err) print(copy, err.code) end)
            """)
        test.settle()
        #expect(test.lines == ["1", "nil\tinvalid_argument"], "\(test.stderr)")
    }
}
