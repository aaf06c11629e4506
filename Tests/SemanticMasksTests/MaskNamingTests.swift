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
