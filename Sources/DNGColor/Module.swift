// DNGColor module
