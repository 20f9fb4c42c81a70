"""The one error type workshop services raise: its message is safe to show the person who acted."""


class WorkshopError(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
