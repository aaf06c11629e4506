import ImageCore
import Testing

/// The one reading of the DNG NoiseProfile: 2 values (one pair for every plane) or 6 (a pair
/// per colour plane), none negative or not finite.
@Suite struct NoiseProfileTests {
    @Test func onePairOrThree() throws {
        let one = try NoiseProfile([2e-5, 4.5e-7])
        #expect(one.scale == [2e-5, 2e-5, 2e-5] && one.offset == [4.5e-7, 4.5e-7, 4.5e-7])
        let three = try NoiseProfile([1, 2, 3, 4, 5, 6])
        #expect(three.scale == [1, 3, 5] && three.offset == [2, 4, 6])
    }

    @Test func otherCountsAndValuesRefused() {
        for values in [[], [1.0], [1, 2, 3, 4], [1, 2, 3, 4, 5, 6, 7, 8]] {
            #expect(throws: NoiseProfile.Problem.count(values.count)) { try NoiseProfile(values) }
        }
        #expect(throws: NoiseProfile.Problem.negativeOrNotFinite) { try NoiseProfile([-1, 2]) }
        #expect(throws: NoiseProfile.Problem.negativeOrNotFinite) { try NoiseProfile([.nan, 2, 3, 4, 5, 6]) }
        #expect("\(NoiseProfile.Problem.count(4))".contains("has 4 values"))
    }
}
