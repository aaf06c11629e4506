"""The raw image of a DNG as tifffile sees it, for the peer scripts beside this file."""

RAW_PHOTOMETRIC = (34892, 32803)  # LinearRaw, CFA


def raw_page(tif):
    """The first IFD holding raw data, searching the IFD chain and every SubIFD tree."""
    queue = list(tif.pages)
    while queue:
        page = queue.pop(0)
        if int(page.photometric) in RAW_PHOTOMETRIC:
            return page
        if page.pages is not None:
            queue.extend(page.pages)
    for series in tif.series:
        for page in series.pages:
            if page is not None and int(page.photometric) in RAW_PHOTOMETRIC:
                return page
    return None
