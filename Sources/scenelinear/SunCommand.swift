import ArgumentParser
import Foundation
import SceneLinearKit

extension SceneLinearCommand {
    struct Sun: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sun",
            abstract: "The sun's position from a site at given times or at DNG files' capture times.",
            discussion: """
                Prints the sun's apparent elevation, azimuth (degrees east of north) and zenith \
                angle for each --time and each FILE's capture time (DateTimeOriginal with \
                SubSecTimeOriginal, placed in UTC by OffsetTimeOriginal, or --utc-offset when the \
                file has none), from --site or, for a file without it, the file's GPS position \
                (a file with neither is refused, exit 14). The equations are the NOAA solar calculator's (Meeus), with the \
                topocentric parallax and NREL SPA's refraction for --pressure and --temperature; \
                against NREL SPA they agree within 0.02° over 1900–2100 (docs/studies.md). A \
                minute of clock error moves the sun by up to 0.25°: check the camera's clock.

                --json prints schema "scenelinear.sun/1": the site given, the refraction inputs \
                and, per moment, time (UTC, ISO 8601), its site and whether that was given or the \
                file's GPS, zenith, azimuth, elevation, refraction, the declination, the equation \
                of time (minutes) and the distance (AU).
                """)

        @Argument(help: "DNG files whose capture times to use.")
        var files: [String] = []

        @Option(parsing: .unconditional, help: ArgumentHelp("The site: latitude,longitude[,elevation] in degrees (north and east positive) and metres. Needed for --time; a file without it uses its GPS position, and with it the site given.", valueName: "lat,lon[,m]"))
        var site: String?

        @Option(name: .customLong("time"), help: ArgumentHelp("A moment in ISO 8601 with its zone (2026-06-21T12:00:00Z, 2026-06-21T14:00:00+02:00); repeatable.", valueName: "time"))
        var times: [String] = []

        @Option(parsing: .unconditional, help: ArgumentHelp("The camera clock's zone for files without OffsetTimeOriginal: ±HH:MM east of UTC.", valueName: "±HH:MM"))
        var utcOffset: String?

        @Option(help: ArgumentHelp("Air pressure for the refraction, hPa (default: the standard atmosphere at the site's elevation).", valueName: "hPa"))
        var pressure: Double?

        @Option(help: ArgumentHelp("Air temperature for the refraction, °C.", valueName: "°C"))
        var temperature: Double = 10

        @OptionGroup var style: OutputStyleOptions

        func validate() throws {
            if files.isEmpty && times.isEmpty { throw ValidationError("give a --time or DNG files") }
            if let site, case .failure(let e) = Site.parse(site) { throw ValidationError(e.description) }
            if site == nil && !times.isEmpty { throw ValidationError("--time needs --site") }
            for t in times { if case .failure(let e) = UTCTime.parse(iso: t) { throw ValidationError(e.description) } }
            if let utcOffset, UTCTime.parseOffset(utcOffset) == nil { throw ValidationError("--utc-offset '\(utcOffset)' is not ±HH:MM") }
            if let pressure, !(pressure > 0 && pressure < 1200) { throw ValidationError("--pressure must lie between 0 and 1200 hPa") }
            if !(temperature > -90 && temperature < 60) { throw ValidationError("--temperature must lie between −90 and 60 °C") }
        }

        func run() throws {
            try reportingFailures(json: style.json) {
                let given = try site.map { try Site.parse($0).get() }
                var report = SunReport(site: given, pressure: pressure, temperature: temperature)
                for t in times { report.add(try UTCTime.parse(iso: t).get()) }
                for file in files {
                    let (time, gps) = try CaptureMoment.withPosition(path: file, fallbackOffset: utcOffset.flatMap(UTCTime.parseOffset))
                    guard given != nil || gps != nil else {
                        throw PhotometryError(path: file, reason: "the file records no GPS position: give the site with --site", category: .unsupportedFeature)
                    }
                    report.add(time, file: file, at: given == nil ? gps : nil)
                }
                print(style.json ? try report.json() : report.text)
            }
        }
    }
}
