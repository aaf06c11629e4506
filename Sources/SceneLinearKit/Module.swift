// SceneLinearKit module
