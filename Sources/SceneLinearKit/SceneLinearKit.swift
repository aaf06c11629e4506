// SceneLinearKit: the library in one import — the streaming develop engine, the
// measurements and reports, and batch conversion. Simulation and the DNG writer are
// separate modules (CaptureSimulation, DNGWriter, SimulationCheck), not part of it.
@_exported import Analysis
@_exported import Batching
@_exported import Engine
@_exported import Measuring
@_exported import LensFit
@_exported import Glare
@_exported import Reporting
@_exported import Merging
@_exported import Studies
