import Foundation
import Testing
@testable import Studies

/// The sun's position against published reference values, and the times it is computed from.
struct SolarPositionTests {
    /// NREL SPA's own test case (Reda & Andreas 2004, and its spa_tester): 2003-10-17 12:30:30
    /// at UTC−7, 39.742476° N 105.1786° W, 1830.14 m, 820 hPa, 11 °C → Julian day 2452930.312847,
    /// zenith 50.111622°, azimuth 194.340241°. It lands within 0.003° (stated: 0.02° anywhere in 1900–2100), tested to 0.005°.
    @Test func agreesWithTheSPATestCase() throws {
        let time = try UTCTime.parse(iso: "2003-10-17T12:30:30-07:00").get()
        #expect(abs(time.julianDay - 2452930.312847) < 1e-6)
        let site = Site(latitude: 39.742476, longitude: -105.1786, elevation: 1830.14)
        let sun = SolarPosition(at: time, site: site, pressure: 820, temperature: 11)
        #expect(abs(sun.zenith - 50.111622) < 0.005, "zenith \(sun.zenith)")
        #expect(abs(sun.azimuth - 194.340241) < 0.005, "azimuth \(sun.azimuth)")
        #expect(sun.refraction > 0.014 && sun.refraction < 0.018, "refraction \(sun.refraction)")
    }

    /// Meeus, Astronomical Algorithms, example 25.a: 1992 October 13, 0h TD → the sun's apparent
    /// declination −7.78507° and distance 0.99766 AU (the equations' own worked example; TD − UT,
    /// 59 s then, moves the declination by 0.0003°).
    @Test func agreesWithMeeusExample() {
        let sun = SolarPosition(at: UTCTime(year: 1992, month: 10, day: 13), site: Site(latitude: 0, longitude: 0))
        #expect(abs(sun.declination - -7.78507) < 0.002, "declination \(sun.declination)")
        #expect(abs(sun.distance - 0.99766) < 0.0001, "distance \(sun.distance)")
    }

    /// Geometry that needs no table: at the June solstice the sun at local noon stands over the
    /// Tropic of Cancer (23.44° declination), due south at 50° N and due north at 0°; it rises
    /// in the east and sets in the west; below the horizon no refraction is added.
    @Test func geometry() {
        let solstice = SolarPosition(at: UTCTime(year: 2026, month: 6, day: 21, hour: 12), site: Site(latitude: 23.44, longitude: 0))
        #expect(abs(solstice.declination - 23.43) < 0.02)
        let noon = SolarPosition(at: UTCTime(year: 2026, month: 6, day: 21, hour: 12, minute: 2), site: Site(latitude: 50, longitude: 0))
        #expect(abs(noon.azimuth - 180) < 1 && abs(noon.elevation - (90 - 50 + 23.44)) < 0.1, "\(noon)")
        let equator = SolarPosition(at: UTCTime(year: 2026, month: 6, day: 21, hour: 12, minute: 2), site: Site(latitude: 0, longitude: 0))
        #expect(equator.azimuth < 1 || equator.azimuth > 359)
        let morning = SolarPosition(at: UTCTime(year: 2026, month: 3, day: 20, hour: 7), site: Site(latitude: 50, longitude: 0))
        #expect(morning.azimuth > 80 && morning.azimuth < 110 && morning.elevation > 0 && morning.elevation < 15, "\(morning)")
        let evening = SolarPosition(at: UTCTime(year: 2026, month: 3, day: 20, hour: 17), site: Site(latitude: 50, longitude: 0))
        #expect(evening.azimuth > 250 && evening.azimuth < 280, "\(evening)")
        let night = SolarPosition(at: UTCTime(year: 2026, month: 3, day: 20, hour: 0), site: Site(latitude: 50, longitude: 0))
        #expect(night.elevation < -30 && night.refraction == 0)
        let d = noon.direction
        #expect(abs(d.x * d.x + d.y * d.y + d.z * d.z - 1) < 1e-12 && d.y < 0 && d.z > 0)
    }

    @Test func times() throws {
        #expect(try UTCTime.parse(iso: "2000-01-01T12:00:00Z").get().julianDay == 2451545)
        #expect(try UTCTime.parse(iso: "1970-01-01 00:00:00Z").get().seconds == 0)
        #expect(try UTCTime.parse(iso: "2026-06-21T14:00:00.250+02:00").get() == UTCTime(year: 2026, month: 6, day: 21, hour: 12, second: 0.25))
        #expect(try UTCTime.parse(iso: "2026-06-21T05:00:00-0700").get() == UTCTime(year: 2026, month: 6, day: 21, hour: 12))
        #expect(try UTCTime.parse(iso: "1969-12-31T23:59:59Z").get().seconds == -1)
        #expect(UTCTime(year: 2024, month: 2, day: 29, hour: 23, minute: 59, second: 59.5).iso8601 == "2024-02-29T23:59:59.500Z")
        #expect(UTCTime(year: 1900, month: 3, day: 1).iso8601 == "1900-03-01T00:00:00Z")
        for bad in ["2026-06-21T12:00:00", "2026-02-30T12:00:00Z", "2026-06-21T24:00:00Z", "21/06/2026 12:00Z", "2026-06-21T12:00:00+25:00", "2026-06-21T12:00:00.Z"] {
            guard case .failure = UTCTime.parse(iso: bad) else { Issue.record("\(bad) was accepted"); continue }
        }
        let exif = try UTCTime.parse(exif: "2026:06:21 14:00:01", subSeconds: "25", offset: "+02:00").get()
        #expect(exif == UTCTime(year: 2026, month: 6, day: 21, hour: 12, second: 1.25))
        #expect(try UTCTime.parse(exif: "2026:06:21 14:00:01", offset: nil, fallbackOffset: 120).get() == UTCTime(year: 2026, month: 6, day: 21, hour: 12, second: 1))
        guard case .failure(let e) = UTCTime.parse(exif: "2026:06:21 14:00:01", offset: nil) else { Issue.record("no offset accepted"); return }
        #expect(e.description.contains("--utc-offset"))
        #expect(UTCTime.parseOffset("-07:00") == -420 && UTCTime.parseOffset("+0530") == 330 && UTCTime.parseOffset("Z") == 0)
        #expect(UTCTime.parseOffset("0700") == nil && UTCTime.parseOffset("+7") == nil && UTCTime.parseOffset("+07::00") == nil)
    }

    @Test func sites() throws {
        #expect(try Site.parse("39.742476,-105.1786,1830.14").get() == Site(latitude: 39.742476, longitude: -105.1786, elevation: 1830.14))
        #expect(try Site.parse(" 51.5 , -0.12 ").get() == Site(latitude: 51.5, longitude: -0.12))
        for bad in ["91,0", "0,181", "a,b", "1", "1,2,3,4", "1,nan", "0,0,20000"] {
            guard case .failure = Site.parse(bad) else { Issue.record("\(bad) was accepted"); continue }
        }
    }
}
