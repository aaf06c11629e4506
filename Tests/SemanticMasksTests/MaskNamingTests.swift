import Testing
@testable import SemanticMasks

@Suite struct MaskNamingTests {
    @Test func appleMattesGetShortNames() {
        let cases: [(String, String)] = [
            ("urn:com:apple:photo:2020:aux:semanticskymatte", "sky"),
            ("urn:com:apple:photo:2020:aux:semanticskinmatte", "skin"),
            ("urn:com:apple:photo:2020:aux:semantichairmatte", "hair"),
            ("urn:com:apple:photo:2020:aux:semanticteethmatte", "teeth"),
            ("urn:com:apple:photo:2020:aux:semanticglassesmatte", "glasses"),
            ("urn:com:apple:photo:2018:aux:portraiteffectsmatte", "portraiteffects"),
            ("urn:com:apple:photo:2020:aux:hairsegmentationmatte", "hairsegmentation"),
            ("urn:example:Semantic_Sky_Matte", "sky"),
            ("urn:example:semanticmatte", "semanticmatte"),
            ("urn:example:water.body", "water_body"),
            ("", "mask"),
        ]
        for (urn, name) in cases { #expect(MaskNaming.baseName(urn) == name, "\(urn)") }
        #expect(MaskNaming.baseName(nil) == "mask")
    }
}

extension MaskNamingTests {
    @Test func duplicatesTakeInstanceIDsOrOrdinals() {
        let skin = "urn:com:apple:photo:2020:aux:semanticskinmatte"
        #expect(MaskNaming.layerNames([(skin, "Person A"), (skin, "person b"), ("urn:x:semanticskymatte", nil)])
            == ["skin_person_a", "skin_person_b", "sky"])
        // Missing or repeated instance IDs: ordinals in file order.
        #expect(MaskNaming.layerNames([(skin, nil), (skin, "7")]) == ["skin_1", "skin_2"])
        #expect(MaskNaming.layerNames([(skin, "7"), (skin, "7")]) == ["skin_1", "skin_2"])
        // The EXR clip mask's name is reserved.
        #expect(MaskNaming.layerNames([("urn:x:clipped", nil)]) == ["clipped_1"])
        // A suffixed name never takes another mask's plain name.
        #expect(MaskNaming.layerNames([("urn:x:sky_1", nil), ("urn:x:sky", nil), ("urn:y:sky", nil)])
            == ["sky_1", "sky_1_2", "sky_2"])
        #expect(MaskNaming.layerNames([(nil, nil), ("", nil)]) == ["mask_1", "mask_2"])
    }
}
