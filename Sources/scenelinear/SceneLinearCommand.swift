import ArgumentParser
import SceneLinearKit

@main
struct SceneLinearCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "scenelinear", abstract: "DNG raw photos to scene-linear light.")
    func run() throws {}
}
