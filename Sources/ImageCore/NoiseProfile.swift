/// A DNG NoiseProfile (tag 51041, DNG 1.7.1 p.59): for each of the three colour planes, the
/// variance `S · x + O` of a linear reference value x. The one reading of the tag for every
/// consumer (the merge's weights, the measurements' budgets).
public struct NoiseProfile: Sendable, Equatable {
    /// S and O of planes 0, 1, 2.
    public let scale: [Double]
    public let offset: [Double]

    /// - Parameter values: S₁, O₁ (one pair for every plane) or S₁, O₁, S₂, O₂, S₃, O₃ (a pair
    ///   per plane): the specification's 2 or 2 × ColorPlanes values, three planes here.
    /// - Throws: `NoiseProfile.Problem` saying what is wrong with them.
    public init(_ values: [Double]) throws(Problem) {
        guard values.count == 2 || values.count == 6 else { throw .count(values.count) }
        guard values.allSatisfy({ $0.isFinite && $0 >= 0 }) else { throw .negativeOrNotFinite }
        let pairs = values.count / 2
        scale = (0..<3).map { values[2 * min($0, pairs - 1)] }
        offset = (0..<3).map { values[2 * min($0, pairs - 1) + 1] }
    }

    /// Why a NoiseProfile's values cannot be used.
    public enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
        case count(Int)
        case negativeOrNotFinite

        public var description: String {
            switch self {
            case .count(let n): "it has \(n) values; a profile has 2 (one pair for all planes) or 6 (a pair per colour plane)"
            case .negativeOrNotFinite: "a value is negative or not finite"
            }
        }
    }
}
