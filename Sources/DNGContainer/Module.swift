// DNGContainer module
