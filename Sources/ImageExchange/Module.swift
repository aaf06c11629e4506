// ImageExchange module
