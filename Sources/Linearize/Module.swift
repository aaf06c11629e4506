// Linearize module
