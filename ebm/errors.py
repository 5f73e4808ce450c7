"""User-facing errors.

Every error a user can cause (bad input, a malformed file, a missing index) is an
``EbmError`` whose message names the problem; the CLI prints it without a traceback.
"""


class EbmError(Exception):
    """An error with a message meant for the user."""


class InputError(EbmError):
    """Bad input: a malformed file, frame, query or argument."""


class DataError(EbmError):
    """Missing or corrupt data the program needs (an index, a bundled file)."""


class ServiceError(EbmError):
    """An external service (E-utilities) failed after retries."""
