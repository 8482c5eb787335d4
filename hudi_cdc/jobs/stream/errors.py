"""The streamer's two kinds of failure."""


class JobInputError(Exception):
    """Bad input the user can fix; the message names the file, field or table."""


class TableReadError(RuntimeError):
    """The table's own state could not be read (checkpoint, latest commit); one line naming the table."""
