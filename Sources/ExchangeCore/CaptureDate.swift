/// The capture time as the output formats record it: EXR's `capDate` and Radiance's
/// `CAPDATE` both take EXIF's `DateTimeOriginal` form.
package enum CaptureDate {
    /// True for "YYYY:MM:DD HH:MM:SS" (EXIF DateTimeOriginal), the form EXR's `capDate` and
    /// Radiance's `CAPDATE` require.
    package static func isExifDateTime(_ s: String) -> Bool {
        let pattern = Array("dddd:dd:dd dd:dd:dd")
        let chars = Array(s.utf8)
        guard chars.count == pattern.count else { return false }
        for (c, p) in zip(chars, pattern) {
            if p == "d" ? !(c >= 48 && c <= 57) : c != p.asciiValue! { return false }
        }
        return true
    }
}
