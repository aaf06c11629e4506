import ImageCore
import Opcodes
import TestSupport

/// One valid instance of every opcode of DNG 1.7.1, with seeded random values.
enum Samples {
    static func every(seed: UInt64 = 1) -> [Opcode] {
        var rng = SeededGenerator(seed: seed)
        func d() -> Double { Double.random(in: -1...1, using: &rng) }
        func f() -> Float { Float.random(in: 0.5...2, using: &rng) }
        let area = OpcodeArea(top: 2, left: 3, bottom: 40, right: 51, plane: 0, planes: 3, rowPitch: 2, colPitch: 3)
        return [
            .warpRectilinear(WarpRectilinear(planes: (0..<3).map { _ in .init(radial: [1, d(), d(), d()], tangential: [d() / 100, d() / 100]) },
                                             centerX: 0.48, centerY: 0.52)),
            .warpFisheye(WarpFisheye(planes: [[1, d(), d(), d()]], centerX: 0.5, centerY: 0.5)),
            .fixVignetteRadial(FixVignetteRadial(coefficients: (0..<5).map { _ in d() }, centerX: 0.4, centerY: 0.6)),
            .fixBadPixelsConstant(FixBadPixelsConstant(constant: 0, bayerPhase: 1)),
            .fixBadPixelsList(FixBadPixelsList(bayerPhase: 2, points: [BadPixel(row: 5, column: 7), BadPixel(row: -1, column: 9)],
                                               rectangles: [PixelRect(top: 10, left: 10, bottom: 12, right: 20)])),
            .trimBounds(PixelRect(top: 8, left: 8, bottom: 3000, right: 4000)),
            .mapTable(MapTable(area: area, table: (0..<300).map { _ in UInt16.random(in: 0...65535, using: &rng) })),
            .mapPolynomial(MapPolynomial(area: area, coefficients: [0.01, 0.98, 0.02, -0.01])),
            .gainMap(GainMap(area: OpcodeArea(top: 0, left: 0, bottom: 3024, right: 4032, plane: 1, planes: 1, rowPitch: 2, colPitch: 2),
                             pointsV: 3, pointsH: 4, spacingV: 0.5, spacingH: 1.0 / 3, originV: 0, originH: 0, mapPlanes: 2,
                             gains: (0..<24).map { _ in f() })),
            .deltaPerRow(AreaValues(area: area, values: (0..<area.sampledRows).map { _ in f() })),
            .deltaPerColumn(AreaValues(area: area, values: (0..<area.sampledColumns).map { _ in f() })),
            .scalePerRow(AreaValues(area: area, values: (0..<area.sampledRows).map { _ in f() })),
            .scalePerColumn(AreaValues(area: area, values: (0..<area.sampledColumns).map { _ in f() })),
            .warpRectilinear2(WarpRectilinear2(planes: [.init(radial: (0..<15).map { i in i == 0 ? 1 : d() / 10 }, tangential: [0.001, -0.002],
                                                              minimumValidRadius: 0, maximumValidRadius: 1.2)],
                                               centerX: 0.5, centerY: 0.5, useReciprocal: true)),
        ]
    }
}

/// An image filled with seeded random values in `range`.
func randomImage(width: Int, height: Int, channels: Int, seed: UInt64, range: ClosedRange<Float> = 0.05...0.9) -> ImageBuffer<Float> {
    var rng = SeededGenerator(seed: seed)
    return ImageBuffer(width: width, height: height, channels: channels,
                       samples: (0..<(width * height * channels)).map { _ in Float.random(in: range, using: &rng) })
}

/// Parses the list built from `opcodes` and applies it to `image`.
@discardableResult
func applyList(_ opcodes: [Opcode], list: OpcodeListID = .list2, flags: UInt32 = 0, to image: inout ImageBuffer<Float>,
               context: OpcodeContext? = nil) throws -> OpcodeReport {
    var b = OpcodeListBuilder()
    for op in opcodes { b.add(op, flags: flags) }
    let parsed = try OpcodeList.parse(b.bytes, list: list)
    return try OpcodeApplier.apply(parsed, to: &image, context: context ?? OpcodeContext(wholeImage: image))
}
