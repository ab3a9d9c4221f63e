import Model
import Testing

@Suite struct ValueTests {
    @Test func literalsBuildValues() {
        #expect(Value(nilLiteral: ()) == .null)
        let values: [Value] = [true, 1, 1.5, "s", [1], ["k": 1]]
        #expect(values == [.bool(true), .integer(1), .number(1.5), .string("s"), .array([.integer(1)]), .object(["k": .integer(1)])])
        #expect(Value.integer(1) != Value.number(1.0), "integers and floats stay distinct")
    }

    @Test func accessors() {
        #expect(Value.integer(3).doubleValue == 3)
        #expect(Value.number(2.5).doubleValue == 2.5)
        #expect(Value.string("3").doubleValue == nil)
        #expect(Value.number(4.0).integerValue == 4)
        #expect(Value.number(4.5).integerValue == nil)
        #expect(Value.number(.nan).integerValue == nil)
        #expect(Value.string("a").stringValue == "a")
        #expect(Value.integer(1).stringValue == nil)
        #expect(Value.bool(false).boolValue == false)
        #expect(Value.null.boolValue == nil)
        #expect(Value.array([1]).arrayValue == [1])
        #expect(Value.object([:]).arrayValue == nil)
        #expect(Value.null.isNull && !Value.bool(false).isNull)
    }

    @Test func subscriptReadsObjectsAndModels() {
        let object: Value = ["a": 1]
        #expect(object["a"] == 1)
        #expect(object["b"] == .null)
        #expect(Value.model(DataModel("location", ["lat": 1.5]))["lat"] == 1.5)
        #expect(Value.array([1])["a"] == .null)
        #expect(Value.string("x")["a"] == .null)
    }

    @Test func typeNamesAreLuaWords() {
        let counter = Counter()
        let cases: [(Value, String)] = [
            (.null, "nil"), (true, "boolean"), (1, "number"), (1.5, "number"), ("s", "string"), ([1], "table"),
            (["a": 1], "table"), (.model(DataModel("placemark", [:])), "placemark"), (.handle(counter.handle), "counter"),
        ]
        for (value, name) in cases { #expect(value.typeName == name) }
    }

    @Test func dataModelsDropNilFields() {
        let model = DataModel("placemark", ["name": "Paris", "country": .null])
        #expect(model.fields.keys.sorted() == ["name"])
        #expect(model["country"] == .null)
        #expect(model["name"] == "Paris")
        #expect(model == DataModel("placemark", ["name": "Paris"]))
        #expect(model != DataModel("location", ["name": "Paris"]))
    }

    @Test func handlesCompareByIdentity() {
        let a = Counter(), b = Counter()
        #expect(ObjectHandle(a) == ObjectHandle(a))
        #expect(ObjectHandle(a) != ObjectHandle(b))
        #expect(Set([ObjectHandle(a), ObjectHandle(a), ObjectHandle(b)]).count == 2)
        #expect(Value.handle(ObjectHandle(a)) == .handle(a.handle))
        #expect(ObjectHandle(a).id == ObjectIdentifier(a))
    }

    @Test func convertibleRoundTrips() {
        #expect(Int(value: 3) == 3)
        #expect(Int(value: 3.0) == 3)
        #expect(Int(value: 3.5) == nil)
        #expect(Int64(value: "3") == nil)
        #expect(Double(value: 3) == 3.0)
        #expect(Bool(value: 1) == nil)
        #expect(String(value: "a") == "a")
        #expect(5.value == .integer(5))
        #expect(2.5.value == .number(2.5))
        #expect("x".value == "x")
        #expect(true.value == true)
    }

    @Test func optionalsAndArraysConvert() {
        #expect(String?.none.value == .null)
        #expect(String?("a").value == "a")
        #expect(String?(value: .null) == .some(nil))
        #expect(String?(value: "a") == .some("a"))
        #expect(String?(value: 1) == nil, "a wrong type is not nil, it does not fit")
        #expect([1, 2].value == [1, 2])
        #expect([Int](value: [1, 2.0]) == [1, 2])
        #expect([Int](value: [1, "2"]) == nil)
        #expect([Int](value: 1) == nil)
        let model = DataModel("location", ["lat": 1])
        #expect(DataModel(value: model.value) == model)
        #expect(DataModel(value: ["lat": 1]) == nil)
        #expect(Value(value: "v") == "v")
    }

    @Test func pluginContextSections() {
        let context = PluginContext(config: ["step": 2], sections: ["counter": ["step": 2]], dataDirectory: "/tmp/d",
                                    settings: ["location": "48,2"])
        #expect(context.config["step"] == 2)
        #expect(context.section("counter") == ["step": 2])
        #expect(context.section("none") == .object([:]))
        #expect(PluginContext().config == .object([:]))
        #expect(context.settings["location"] == "48,2")
    }

    @Test func aModelOfADeclaredSchemaIsTheModelOfItsFieldsWithoutItsNulls() {
        let schema = ModelSchema("placemark", ["name", "admin1", "lat"])
        let model = DataModel(schema, ["Paris", .null, 48.85])
        #expect(model.typeName == "placemark")
        #expect(model.fields == ["name": "Paris", "lat": 48.85])
        #expect(model["name"] == "Paris" && model["admin1"] == .null && model["nosuch"] == .null)
        #expect(Value.model(model)["lat"] == 48.85)
        let same = DataModel("placemark", ["lat": 48.85, "name": "Paris", "admin1": .null])
        #expect(model == same && same == model)
        #expect(model.hashValue == same.hashValue)
        #expect(model != DataModel(schema, ["Paris", "Île-de-France", 48.85]))
        #expect(model != DataModel(ModelSchema("location", ["name", "admin1", "lat"]), ["Paris", .null, 48.85]))
        // Values missing at the end are nulls; values past the names are dropped.
        #expect(DataModel(schema, ["Paris"]).fields == ["name": "Paris"])
        #expect(DataModel(schema, ["Paris", .null, 1, 2]).values == ["Paris", .null, 1])
    }
}

