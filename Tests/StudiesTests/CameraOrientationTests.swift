import Foundation
import Studies
import Testing

/// The camera's orientation against directions worked out by hand.
struct CameraOrientationTests {
    func close(_ a: SIMD3<Double>, _ b: SIMD3<Double>) -> Bool { ((a - b) * (a - b)).sum() < 1e-20 }

    /// A level camera facing south: the south horizon is straight ahead, west to its right,
    /// the zenith up; the sun at 30° in the south lies 30° up the image's vertical.
    @Test func levelFacingSouth() {
        let view = CameraOrientation(azimuth: 180, elevation: 0)
        #expect(close(view.cameraDirection(azimuth: 180, elevation: 0), SIMD3(0, 0, 1)))
        #expect(close(view.cameraDirection(azimuth: 270, elevation: 0), SIMD3(1, 0, 0)))
        #expect(close(view.cameraDirection(azimuth: 0, elevation: 90), SIMD3(0, 1, 0)))
        #expect(close(view.cameraDirection(azimuth: 180, elevation: 30), SIMD3(0, 0.5, 3.0.squareRoot() / 2)))
    }

    /// At the zenith with north up (azimuth 180 given): east on the left, as the sky is seen
    /// from below; the camera rolled 90° clockwise (seen from behind it) puts north on the
    /// image's left.
    @Test func atTheZenithNorthUp() {
        let view = CameraOrientation(azimuth: 180, elevation: 90)
        #expect(close(view.cameraDirection(azimuth: 0, elevation: 0), SIMD3(0, 1, 0)))
        #expect(close(view.cameraDirection(azimuth: 90, elevation: 0), SIMD3(-1, 0, 0)))
        #expect(close(view.cameraDirection(azimuth: 0, elevation: 90), SIMD3(0, 0, 1)))
        let rolled = CameraOrientation(azimuth: 180, elevation: 90, roll: 90)
        #expect(close(rolled.cameraDirection(azimuth: 0, elevation: 0), SIMD3(-1, 0, 0)))
    }

    @Test func parsing() throws {
        #expect(try CameraOrientation.parse("180,90").get() == CameraOrientation(azimuth: 180, elevation: 90))
        #expect(try CameraOrientation.parse(" 45 , 10 , -5 ").get() == CameraOrientation(azimuth: 45, elevation: 10, roll: -5))
        for bad in ["180", "1,2,3,4", "a,b", "0,91", "0,0,200", "nan,0"] {
            #expect(throws: StudyInputError.self) { try CameraOrientation.parse(bad).get() }
        }
    }
}
