"""Import-only stand-in for pylatexenc (see ../README.md)."""
