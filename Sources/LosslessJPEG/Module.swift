// LosslessJPEG module
