"""Exceptions: one class per failure category of the command line's exit codes (docs/cli.md).

Every exception carries the library's message (the one `scenelinear` prints, naming the file
and the problem), the category's exit `code` and its `category` name, and `path`, the file the
failure is about when the library names one. InputUnreadableError and OutputError are also
OSErrors: `filename` is that file, and `errno` and `strerror` are set when the failure is a
system call's whose number the library kept (`errno.ENOENT` for a missing input); None otherwise
(docs/python.md, "Errors").
"""
import os


class SceneLinearError(Exception):
    """A failure reported by the library."""
    code = 1
    category = "internal-error"

    #: The file the failure is about, when the library names one.
    path = None

    def __init__(self, message, code=None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def __str__(self):
        # (OSError's own would print "[Errno 2] No such file or directory: 'x'" once
        # `filename` is set: the library's message says more, naming the file too.)
        return self.message

    def _details(self, path, system_error):
        """Sets the file and, for an OSError, the system error number."""
        self.path = path or None
        if isinstance(self, OSError):
            self.filename = self.path
            if system_error:
                self.errno, self.strerror = system_error, os.strerror(system_error)
        return self


class InputUnreadableError(SceneLinearError, OSError):
    """The input does not exist or cannot be read (exit 10)."""
    code, category = 10, "input-unreadable"


class NotDNGError(SceneLinearError):
    """The input is not a TIFF/DNG file (exit 11)."""
    code, category = 11, "not-dng"


class TruncatedError(SceneLinearError):
    """The file ends before data it points to (exit 12)."""
    code, category = 12, "truncated"


class CorruptDataError(SceneLinearError):
    """The file is damaged: inconsistent structure, bad values, corrupt compressed data (exit 13)."""
    code, category = 13, "corrupt-data"


class UnsupportedError(SceneLinearError):
    """A valid file using something the library does not support (exit 14)."""
    code, category = 14, "unsupported-feature"


class UnsupportedVersionError(UnsupportedError):
    """A DNGBackwardVersion newer than the reader understands (exit 15)."""
    code, category = 15, "unsupported-version"


class OutputError(SceneLinearError, OSError):
    """An output cannot be written (exit 16)."""
    code, category = 16, "output-failure"


class LimitExceededError(SceneLinearError, MemoryError):
    """The file would need more pixels or memory than the limits allow (exit 17)."""
    code, category = 17, "limit-exceeded"


class CalibrationMismatchError(SceneLinearError):
    """A calibration applied to another camera body (exit 18)."""
    code, category = 18, "calibration-mismatch"


class BracketMismatchError(SceneLinearError):
    """Frames that cannot be merged into one image (exit 19)."""
    code, category = 19, "bracket-mismatch"


class UsageError(SceneLinearError, ValueError):
    """An argument that cannot be right: an unknown option, a region outside the image (exit 64)."""
    code, category = 64, "usage"


class TemporaryFailureError(SceneLinearError):
    """A temporary condition; the same call may succeed again (exit 75)."""
    code, category = 75, "temporary-failure"


class InternalError(SceneLinearError):
    """A bug: an internal invariant failed (exit 1)."""
    code, category = 1, "internal-error"


_BY_CODE = {c.code: c for c in (InputUnreadableError, NotDNGError, TruncatedError, CorruptDataError, UnsupportedError,
                                UnsupportedVersionError, OutputError, LimitExceededError, CalibrationMismatchError,
                                BracketMismatchError, UsageError, TemporaryFailureError, InternalError)}
_BY_NAME = {c.category: c for c in _BY_CODE.values()}


def from_status(code, message, path=None, system_error=0):
    """The exception for a status code of the C interface, with the failure's file and
    system error number (sl_error_details)."""
    return _BY_CODE.get(code, InternalError)(message, code)._details(path, system_error)


def from_category(name, message):
    """The exception for a category name of a JSON document (`errorCategory`)."""
    cls = _BY_NAME.get(name, InternalError)
    return cls(message, cls.code)
