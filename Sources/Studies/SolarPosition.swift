import Foundation

/// Where a camera stood: latitude and longitude in degrees (north and east positive, WGS 84 as
/// GPS gives them), elevation in metres above sea level.
public struct Site: Sendable, Equatable, Codable {
    public var latitude: Double
    public var longitude: Double
    public var elevation: Double

    public init(latitude: Double, longitude: Double, elevation: Double = 0) {
        self.latitude = latitude
        self.longitude = longitude
        self.elevation = elevation
    }

    /// "lat,lon[,elevation]", or the reason it is not one (malformed, or out of range).
    public static func parse(_ text: String) -> Result<Site, StudyInputError> {
        guard let parts = StudyInputError.numbers(text, count: 2...3) else {
            return .failure(StudyInputError("'\(text)' is not a site: give latitude,longitude[,elevation] in degrees (north and east positive) and metres"))
        }
        let site = Site(latitude: parts[0], longitude: parts[1], elevation: parts.count == 3 ? parts[2] : 0)
        guard abs(site.latitude) <= 90, abs(site.longitude) <= 180, (-500...9000).contains(site.elevation) else {
            return .failure(StudyInputError("site '\(text)': latitude must lie in −90…90°, longitude in −180…180° and elevation in −500…9000 m"))
        }
        return .success(site)
    }
}

/// A bad site, time or grouping input, said in words (the command line turns it into a usage error).
public struct StudyInputError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }

    /// The finite numbers of a comma-separated list of `count` of them, or nil.
    static func numbers(_ text: String, count: ClosedRange<Int>) -> [Double]? {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard count.contains(parts.count), parts.allSatisfy({ $0?.isFinite == true }) else { return nil }
        return parts.map { $0! }
    }
}

/// The sun seen from a site at a moment, by the NOAA solar calculator's equations (Meeus,
/// *Astronomical Algorithms*: the sun's mean longitude and anomaly, the equation of the centre,
/// nutation and aberration in one term, the equation of time), with the topocentric parallax
/// and NREL SPA's refraction (Reda & Andreas 2004), which takes the air's pressure and
/// temperature. Against NREL SPA (±0.0003°) over 1900–2100 with the sun above the horizon the
/// zenith and azimuth agree within 0.02° on the sky (docs/studies.md); the clock matters more:
/// a minute of error is 0.25° of hour angle.
public struct SolarPosition: Sendable, Equatable, Codable {
    /// The apparent (refracted) angle from the zenith, degrees.
    public var zenith: Double
    /// Degrees east of north (0 north, 90 east, 180 south).
    public var azimuth: Double
    /// 90° − zenith.
    public var elevation: Double { 90 - zenith }
    /// The refraction added to the true elevation, degrees.
    public var refraction: Double
    /// The sun's geocentric declination, degrees.
    public var declination: Double
    /// Apparent minus mean solar time, minutes.
    public var equationOfTime: Double
    /// The sun's distance in astronomical units.
    public var distance: Double
    /// The Julian day of the moment (UT).
    public var julianDay: Double

    /// The position at `time` from `site`. `pressure` in hPa (default: the standard
    /// atmosphere at the site's elevation) and `temperature` in °C scale the refraction; no
    /// refraction is added below −0.83° (the sun's whole disc set).
    public init(at time: UTCTime, site: Site, pressure: Double? = nil, temperature: Double = 10) {
        let jd = time.julianDay, t = (jd - 2451545) / 36525
        let meanLongitude = (280.46646 + t * (36000.76983 + t * 0.0003032)).truncatingRemainder(dividingBy: 360)
        let meanAnomaly = 357.52911 + t * (35999.05029 - 0.0001537 * t)
        let e = 0.016708634 - t * (0.000042037 + 0.0000001267 * t)
        let m = Self.radians(meanAnomaly)
        let centre = sin(m) * (1.914602 - t * (0.004817 + 0.000014 * t)) + sin(2 * m) * (0.019993 - 0.000101 * t) + sin(3 * m) * 0.000289
        let trueLongitude = meanLongitude + centre, trueAnomaly = Self.radians(meanAnomaly + centre)
        distance = 1.000001018 * (1 - e * e) / (1 + e * cos(trueAnomaly))
        let node = Self.radians(125.04 - 1934.136 * t)
        let apparentLongitude = Self.radians(trueLongitude - 0.00569 - 0.00478 * sin(node))
        let meanObliquity = 23 + (26 + (21.448 - t * (46.815 + t * (0.00059 - t * 0.001813))) / 60) / 60
        let obliquity = Self.radians(meanObliquity + 0.00256 * cos(node))
        let delta = asin(sin(obliquity) * sin(apparentLongitude))
        declination = Self.degrees(delta)
        let y = pow(tan(obliquity / 2), 2), l0 = Self.radians(meanLongitude)
        equationOfTime = 4 * Self.degrees(y * sin(2 * l0) - 2 * e * sin(m) + 4 * e * y * sin(m) * cos(2 * l0)
                                          - 0.5 * y * y * sin(4 * l0) - 1.25 * e * e * sin(2 * m))
        julianDay = jd
        // True solar time in minutes from the UT time of day, and the hour angle from it.
        let minutes = time.secondsIntoDay / 60 + equationOfTime + 4 * site.longitude
        let hourAngle = Self.radians(minutes / 4 - 180)
        let phi = Self.radians(site.latitude)
        let sinElevation = sin(phi) * sin(delta) + cos(phi) * cos(delta) * cos(hourAngle)
        var trueElevation = Self.degrees(asin(max(-1, min(1, sinElevation))))
        // Parallax: the solar horizontal parallax (8.794″ at 1 AU) times the cosine of the elevation.
        trueElevation -= 8.794 / 3600 / distance * cos(Self.radians(trueElevation))
        let p = pressure ?? 1013.25 * pow(1 - 2.25577e-5 * site.elevation, 5.25588)
        if trueElevation >= -(0.26667 + 0.5667) {
            refraction = p / 1010 * 283 / (273 + temperature) * 1.02 / (60 * tan(Self.radians(trueElevation + 10.3 / (trueElevation + 5.11))))
        } else {
            refraction = 0
        }
        zenith = 90 - (trueElevation + refraction)
        let south = Self.degrees(atan2(sin(hourAngle), cos(hourAngle) * sin(phi) - tan(delta) * cos(phi)))
        azimuth = (south + 180).truncatingRemainder(dividingBy: 360)
        if azimuth < 0 { azimuth += 360 }
    }

    /// The unit vector towards the sun: x east, y north, z up.
    public var direction: SIMD3<Double> {
        let z = Self.radians(zenith), a = Self.radians(azimuth)
        return SIMD3(sin(z) * sin(a), sin(z) * cos(a), cos(z))
    }

    static func radians(_ d: Double) -> Double { d * .pi / 180 }
    static func degrees(_ r: Double) -> Double { r * 180 / .pi }
}
