// DNGWriter module
