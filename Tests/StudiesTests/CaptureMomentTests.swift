import Foundation
import SceneLinearKit
import Testing
import TestSupport

/// Capture times and positions read from real DNGs (the shared datasets; skipped, and said so,
/// when absent), checked against exiftool's listing of the same files and against NREL SPA.
struct CaptureMomentTests {
    /// An iPhone 12 Pro ProRAW header: DateTimeOriginal 2020:12:29 14:24:45, SubSecTimeOriginal
    /// 700, OffsetTimeOriginal −05:00; GPS 34° 3′ 34.59″ N, 84° 40′ 54.21″ W, 261.0165 m (exiftool).
    /// The sun there and then by pvlib's NREL SPA (pressure of the standard atmosphere at 261 m,
    /// 10 °C): apparent zenith 62.271625°, azimuth 206.984656°.
    @Test func iPhoneCaptureTimeAndPosition() throws {
        let path = try TestData.shared("real/iphone12pro_proraw_header_only.dng").path
        let (time, site) = try CaptureMoment.withPosition(path: path, fallbackOffset: nil)
        #expect(time.iso8601 == "2020-12-29T19:24:45.700Z")
        let gps = try #require(site)
        #expect(abs(gps.latitude - (34 + 3 / 60.0 + 34.59 / 3600)) < 2e-6 && abs(gps.longitude + (84 + 40 / 60.0 + 54.21 / 3600)) < 2e-6, "exiftool rounds to 0.01″")
        #expect(abs(gps.elevation - 261.0165) < 1e-3)
        let sun = SolarPosition(at: time, site: gps, temperature: 10)
        #expect(abs(sun.zenith - 62.271625) < 0.005 && abs(sun.azimuth - 206.984656) < 0.005, "\(sun)")
    }

    /// A GoPro HERO6 DNG: no OffsetTimeOriginal (refused without --utc-offset, naming the
    /// file), GPS 33° 7′ 36.81″ N, 117° 19′ 35.93″ W, 14.287 m below sea level.
    @Test func goProNeedsItsZone() throws {
        let path = try TestData.shared("real/gopro_hero6_vc5_compression9.dng").path
        #expect { try CaptureMoment.of(path: path, fallbackOffset: nil) } throws: { error in
            "\(error)".contains(path) && "\(error)".contains("no UTC offset")
        }
        let (time, site) = try CaptureMoment.withPosition(path: path, fallbackOffset: -8 * 60)
        #expect(time.iso8601 == "2016-01-02T07:07:27Z")
        let gps = try #require(site)
        #expect(abs(gps.latitude - (33 + 7 / 60.0 + 36.81 / 3600)) < 2e-6 && abs(gps.longitude + (117 + 19 / 60.0 + 35.93 / 3600)) < 2e-6, "exiftool rounds to 0.01″")
        #expect(abs(gps.elevation + 14.287) < 0.01)
    }
}
