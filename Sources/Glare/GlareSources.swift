import Measuring
import Foundation
import ImageCore

/// The pixels of a fisheye image that can be part of a glare source, and how they lie: only
/// these are kept (the rest of the circle enters the glare metrics through E_v alone), with
/// what detection needs of each — view direction, 8 neighbours, cell of the direction grid —
/// worked out once and shared by the nominal evaluation and every draw (docs/glare.md).
struct GlareCandidates: Sendable {
    /// Image pixel index (row-major), luminance (cd/m²), σ of the luminance, cos θ · ω, ω.
    var pixel: [Int] = [], luminance: [Double] = [], deviation: [Double] = []
    var weight: [Double] = [], omega: [Double] = []
    var clipped: [Bool] = []
    /// Unit view direction (camera frame: x right, y up, z the axis) of each pixel's centre.
    var direction: [SIMD3<Double>] = []
    /// Per pixel its 8 neighbours' positions in these arrays (−1: not a candidate pixel).
    var neighbours: [Int32] = []
    /// The cell of the direction grid each pixel falls in (side = the merge angle).
    var cell: [Int64] = []

    var count: Int { pixel.count }

    mutating func append(pixel i: Int, luminance l: Double, deviation d: Double, weight w: Double, omega o: Double, clipped c: Bool,
                         direction u: SIMD3<Double>) {
        pixel.append(i)
        luminance.append(l)
        deviation.append(d)
        weight.append(w)
        omega.append(o)
        clipped.append(c)
        direction.append(u)
    }

    /// Fills `neighbours` and `cell` once every pixel is in (pixels in increasing index order).
    mutating func link(width: Int, height: Int, mergeAngle: Double) {
        var position = [Int: Int32](minimumCapacity: count)
        for (k, i) in pixel.enumerated() { position[i] = Int32(k) }
        neighbours = [Int32](repeating: -1, count: 8 * count)
        cell = [Int64](repeating: 0, count: count)
        for (k, i) in pixel.enumerated() {
            let x = i % width, y = i / width
            var n = 0
            for dy in -1...1 {
                for dx in -1...1 where dx != 0 || dy != 0 {
                    let xx = x + dx, yy = y + dy
                    if xx >= 0, yy >= 0, xx < width, yy < height, let j = position[yy * width + xx] { neighbours[8 * k + n] = j }
                    n += 1
                }
            }
            cell[k] = Self.cellKey(direction[k], side: mergeAngle)
        }
    }

    /// The grid cell of a unit vector: its coordinates over `side`, floored, packed 21 bits each.
    static func cellKey(_ u: SIMD3<Double>, side: Double) -> Int64 {
        func c(_ v: Double) -> Int64 { Int64((v / side).rounded(.down)) + (1 << 20) }
        return (c(u.x) << 42) | (c(u.y) << 21) | c(u.z)
    }
}

/// One detected glare source: sums over its pixels.
struct GlareSourceSums: Sendable {
    /// Σ ω, Σ L ω, Σ L ω · (x, y) of the pixel centres, Σ L cos θ ω.
    var omega = 0.0, luminanceOmega = 0.0, position = SIMD2<Double>(), illuminance = 0.0
    var pixels = 0, clippedPixels = 0
    /// L_s: the ω-weighted mean luminance.
    var luminance: Double { omega > 0 ? luminanceOmega / omega : 0 }
    /// The source's position: the pixel centres weighted by L ω.
    var centre: SIMD2<Double> { luminanceOmega > 0 ? position / luminanceOmega : SIMD2() }
}

/// Glare-source detection as evalglare does it by default: pixels brighter than the threshold
/// are candidates; candidates closer than the merge angle to one another (evalglare's -r 0.2
/// compares twice the angle, so 0.1 rad) belong to one source; when a candidate reaches the
/// peak limit, the pixels at or above it leave their source and form sources of their own,
/// joined by the same rule. evalglare grows sources pixel by pixel in scan order and merges
/// neighbours in further passes; here the sources are the connected parts of "closer than the
/// merge angle" (single linkage), which is what those passes converge to, independent of order.
struct GlareDetection: Sendable {
    let candidates: GlareCandidates
    let mergeAngle: Double
    let imageWidth: Int
    /// The pixels above the threshold in every draw, joined once (`prepare`).
    private var base: Base?

    private struct Base: Sendable {
        var sure: [Bool]
        var count: Int
        /// Each candidate's parent: the first pixel of its part for a sure pixel, itself otherwise.
        var parent: [Int32]
        /// Sure pixels with a neighbour that is not sure: the only ones a draw can leave on an edge.
        var edge: [Int]
    }

    init(candidates: GlareCandidates, mergeAngle: Double, imageWidth: Int) {
        self.candidates = candidates
        self.mergeAngle = mergeAngle
        self.imageWidth = imageWidth
    }

    /// Joins the pixels `sure` marks — above the threshold whatever a draw does to them —
    /// once, so that a draw joins only the others to them (more members never part two).
    mutating func prepare(sure: [Bool]) {
        let members = sure.indices.filter { sure[$0] }
        guard !members.isEmpty else { return }
        var labels = [Int32](repeating: -1, count: candidates.count)
        let parts = cluster(members, into: &labels, first: 0)
        var first = [Int32](repeating: -1, count: Int(parts))
        var parent = Array(0..<Int32(candidates.count))
        for k in members {
            if first[Int(labels[k])] < 0 { first[Int(labels[k])] = Int32(k) }
            parent[k] = first[Int(labels[k])]
        }
        let edge = members.filter { k in (0..<8).contains { n in let j = candidates.neighbours[8 * k + n]; return j < 0 || !sure[Int(j)] } }
        base = Base(sure: sure, count: members.count, parent: parent, edge: edge)
    }

    /// The sources among the pixels whose luminance (`luminance`, one per candidate pixel) is
    /// above `threshold`, peaks at or above `peakLimit` split off.
    func sources(luminance: [Double], threshold: Double, peakLimit: Double?) -> (sources: [GlareSourceSums], labels: [Int32]) {
        let members = (0..<candidates.count).filter { luminance[$0] > threshold }
        var labels = [Int32](repeating: -1, count: candidates.count)
        var next: Int32
        if let base, members.reduce(0, { $0 + (base.sure[$1] ? 1 : 0) }) == base.count {
            next = cluster(members, from: base, into: &labels)
        } else {
            next = cluster(members, into: &labels, first: 0)
        }
        if let peakLimit {
            let peaks = members.filter { luminance[$0] >= peakLimit }
            if !peaks.isEmpty { next = cluster(peaks, into: &labels, first: next) }
        }
        var sums = [GlareSourceSums](repeating: GlareSourceSums(), count: Int(next))
        for k in members {
            let s = Int(labels[k]), l = luminance[k], o = candidates.omega[k]
            sums[s].omega += o
            sums[s].luminanceOmega += l * o
            sums[s].position += position(k) * (l * o)
            sums[s].illuminance += l * candidates.weight[k]
            sums[s].pixels += 1
            if candidates.clipped[k] { sums[s].clippedPixels += 1 }
        }
        return (sums.filter { $0.pixels > 0 }, labels)
    }

    /// The pixel centre of candidate k, in image coordinates.
    private func position(_ k: Int) -> SIMD2<Double> {
        let i = candidates.pixel[k]
        return SIMD2(Double(i % imageWidth) + 0.5, Double(i / imageWidth) + 0.5)
    }

    /// Labels `members` (candidate positions) by their connected parts under "closer than the
    /// merge angle", numbered from `first`; returns the next free label.
    private func cluster(_ members: [Int], into labels: inout [Int32], first: Int32) -> Int32 {
        guard !members.isEmpty else { return first }
        var member = [Bool](repeating: false, count: candidates.count)
        for k in members { member[k] = true }
        var sets = UnionFind(count: candidates.count)
        var edge: [Int] = []
        link(members, member: member, sets: &sets, edge: &edge)
        joinAcrossGaps(members, edge: edge, sets: &sets)
        return number(members, sets: &sets, into: &labels, first: first)
    }

    /// The same for members that include every sure pixel: those start joined as `base` has
    /// them, the others join them by image neighbours, then the edges across gaps.
    private func cluster(_ members: [Int], from base: Base, into labels: inout [Int32]) -> Int32 {
        var member = [Bool](repeating: false, count: candidates.count)
        for k in members { member[k] = true }
        var sets = UnionFind(parent: base.parent)
        var edge = base.edge
        link(members.filter { !base.sure[$0] }, member: member, sets: &sets, edge: &edge)
        joinAcrossGaps(members, edge: edge, sets: &sets)
        return number(members, sets: &sets, into: &labels, first: 0)
    }

    /// Joins each of `pixels` to its neighbours that are members; appends to `edge` those with
    /// a neighbour that is not.
    private func link(_ pixels: [Int], member: [Bool], sets: inout UnionFind, edge: inout [Int]) {
        candidates.neighbours.withUnsafeBufferPointer { neighbours in
            for k in pixels {
                var inner = true
                for n in 0..<8 {
                    let j = Int(neighbours[8 * k + n])
                    if j >= 0 && member[j] { sets.union(Int32(k), Int32(j)) } else { inner = false }
                }
                if !inner { edge.append(k) }
            }
        }
    }

    /// Joins the parts that come closer than the merge angle across a gap — their closest
    /// pixels lie on their edges — through the grid of view directions; nothing once one part
    /// is left.
    private func joinAcrossGaps(_ members: [Int], edge: [Int], sets: inout UnionFind) {
        var parts = 0
        for k in members where sets.find(Int32(k)) == Int32(k) { parts += 1 }
        guard parts > 1 else { return }
        let cosMerge = cos(mergeAngle)
        var grid: [Int64: [Int]] = [:]
        for k in edge { grid[candidates.cell[k], default: []].append(k) }
        search: for k in edge {
            let u = candidates.direction[k], cell = candidates.cell[k]
            for dx in Int64(-1)...1 {
                for dy in Int64(-1)...1 {
                    for dz in Int64(-1)...1 {
                        guard let others = grid[cell + (dx << 42) + (dy << 21) + dz] else { continue }
                        for o in others where o < k && sets.find(Int32(o)) != sets.find(Int32(k)) {
                            if (u * candidates.direction[o]).sum() >= cosMerge {
                                sets.union(Int32(k), Int32(o))
                                parts -= 1
                                if parts == 1 { break search }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Numbers the parts of `members` from `first` in the order their first pixels come.
    private func number(_ members: [Int], sets: inout UnionFind, into labels: inout [Int32], first: Int32) -> Int32 {
        var numbers = [Int32](repeating: -1, count: candidates.count)
        var next = first
        for k in members {
            let root = Int(sets.find(Int32(k)))
            if numbers[root] < 0 {
                numbers[root] = next
                next += 1
            }
            labels[k] = numbers[root]
        }
        return next
    }
}

/// Disjoint sets over 0..<count with path halving; the smaller root wins a union.
struct UnionFind {
    private var parent: [Int32]

    init(count: Int) { parent = Array(0..<Int32(count)) }

    init(parent: [Int32]) { self.parent = parent }

    mutating func find(_ a: Int32) -> Int32 {
        var a = Int(a)
        while Int(parent[a]) != a {
            parent[a] = parent[Int(parent[a])]
            a = Int(parent[a])
        }
        return Int32(a)
    }

    mutating func union(_ a: Int32, _ b: Int32) {
        let ra = find(a), rb = find(b)
        if ra != rb { parent[Int(max(ra, rb))] = min(ra, rb) }
    }
}
