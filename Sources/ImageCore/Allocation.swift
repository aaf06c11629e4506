import CProcessGuard
import Foundation

/// The CPUs and memory this process may use: on a cluster node or in a container that is
/// the allocation, not the machine (`docs/robustness.md#limits`).
///
/// - CPUs: the smallest of the affinity mask (`taskset`, Slurm's task binding), the cgroup's
///   CPU quota rounded up (v2 `cpu.max`, v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us`) and
///   `SLURM_CPUS_PER_TASK`.
/// - Memory: the smallest of physical memory, the cgroup's limit (v2 `memory.max`, v1
///   `memory.limit_in_bytes`) and Slurm's (`SLURM_MEM_PER_NODE`, or `SLURM_MEM_PER_CPU`
///   times the task's CPUs; megabytes).
public struct Allocation: Sendable, Equatable {
    public var cpus: Int
    public var memoryBytes: Int
    /// What decided each figure ("affinity mask", "cgroup cpu.max", "SLURM_CPUS_PER_TASK", ...).
    public var cpuSource: String
    public var memorySource: String

    /// This process's allocation, read once.
    public static let current = Allocation.read()

    /// Reads the allocation from `root` (a file system root: "/" normally, a fixture in
    /// tests), the environment and the process.
    public static func read(root: String = "/", environment: [String: String] = ProcessInfo.processInfo.environment,
                            affinity: Int = Int(cpg_affinity_count()),
                            physicalMemory: UInt64 = ProcessInfo.processInfo.physicalMemory,
                            processors: Int = ProcessInfo.processInfo.activeProcessorCount) -> Allocation {
        var cpus = (max(1, processors), "processors"), memory = (Int(min(physicalMemory, UInt64(Int.max))), "physical memory")
        func lower(_ current: inout (Int, String), _ value: Int?, _ source: String) {
            if let value, value >= 1, value < current.0 { current = (value, source) }
        }
        lower(&cpus, affinity > 0 ? affinity : nil, "affinity mask")
        let groups = CgroupPaths(root: root)
        lower(&cpus, groups.cpuQuota(), "cgroup CPU quota")
        let slurmCPUs = environment["SLURM_CPUS_PER_TASK"].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        lower(&cpus, slurmCPUs, "SLURM_CPUS_PER_TASK")
        lower(&memory, groups.memoryLimit(), "cgroup memory limit")
        let megabyte = 1 << 20
        if let perNode = environment["SLURM_MEM_PER_NODE"].flatMap({ Int($0) }), perNode > 0 {
            lower(&memory, perNode.multipliedReportingOverflow(by: megabyte).overflow ? nil : perNode * megabyte, "SLURM_MEM_PER_NODE")
        } else if let perCPU = environment["SLURM_MEM_PER_CPU"].flatMap({ Int($0) }), perCPU > 0 {
            let total = perCPU.multipliedReportingOverflow(by: megabyte * max(1, slurmCPUs ?? 1))
            lower(&memory, total.overflow ? nil : total.partialValue, "SLURM_MEM_PER_CPU")
        }
        return Allocation(cpus: cpus.0, memoryBytes: memory.0, cpuSource: cpus.1, memorySource: memory.1)
    }
}

/// The cgroup (v2 unified, or v1 cpu and memory controllers) of this process under a root.
struct CgroupPaths {
    let root: String
    /// Controller name ("" for v2) → the cgroup's path relative to the hierarchy.
    let membership: [String: String]

    init(root: String) {
        self.root = root.hasSuffix("/") ? String(root.dropLast()) : root
        var membership: [String: String] = [:]
        let text = (try? String(contentsOfFile: self.root + "/proc/self/cgroup", encoding: .utf8)) ?? ""
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            for controller in fields[1].split(separator: ",", omittingEmptySubsequences: false) {
                membership[String(controller)] = String(fields[2])
            }
        }
        self.membership = membership
    }

    func read(_ path: String) -> String? {
        (try? String(contentsOfFile: root + path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The directories to look in for a v1 controller's files (`mounts`: where its hierarchy
    /// may be mounted) or the v2 hierarchy's: the process's own cgroup and its ancestors (a
    /// limit set on a parent applies too), v2 first.
    func directories(v1 controller: String, mounts: [String]) -> [String] {
        var out: [String] = []
        func walk(_ base: String, _ relative: String) {
            var parts = relative.split(separator: "/").map(String.init)
            while true {
                out.append(base + (parts.isEmpty ? "" : "/" + parts.joined(separator: "/")))
                if parts.isEmpty { break }
                parts.removeLast()
            }
        }
        if let unified = membership[""] { walk("/sys/fs/cgroup", unified) }
        if let relative = membership[controller] {
            for mount in mounts { walk("/sys/fs/cgroup/" + mount, relative) }
        }
        return out
    }

    /// The smallest CPU quota on the way up, rounded up to whole CPUs.
    func cpuQuota() -> Int? {
        var best: Int?
        for dir in directories(v1: "cpu", mounts: ["cpu", "cpu,cpuacct"]) {
            var cpus: Double?
            if let max = read(dir + "/cpu.max") {
                let f = max.split(separator: " ")
                if f.count == 2, let quota = Double(f[0]), let period = Double(f[1]), period > 0 { cpus = quota / period }
            } else if let quota = read(dir + "/cpu.cfs_quota_us").flatMap(Double.init), quota > 0,
                      let period = read(dir + "/cpu.cfs_period_us").flatMap(Double.init), period > 0 {
                cpus = quota / period
            }
            if let cpus, cpus > 0 {
                let n = max(1, Int(cpus.rounded(.up)))
                best = min(best ?? n, n)
            }
        }
        return best
    }

    /// The smallest memory limit on the way up.
    func memoryLimit() -> Int? {
        var best: Int?
        for dir in directories(v1: "memory", mounts: ["memory"]) {
            let text = read(dir + "/memory.max") ?? read(dir + "/memory.limit_in_bytes")
            // "max" (v2) or a huge page-rounded number (v1) means no limit.
            if let text, let bytes = UInt64(text), bytes < UInt64(Int.max) / 2 {
                best = min(best ?? Int(bytes), Int(bytes))
            }
        }
        return best
    }
}
