"""Small file helpers shared by the reliability scripts' drivers (chaos_kill.py, soak.py)."""


def read(path):
    """The text of path (undecodable bytes replaced), or "" when it cannot be read."""
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""
