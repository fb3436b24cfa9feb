"""Import-only stand-in for tensordict (see ../README.md): the names verl imports, none of them usable."""

__version__ = "0.10.0"


class TensorDict(dict):
    pass


class NonTensorData:
    pass


class NonTensorStack(list):
    pass


def pad_sequence(*args, **kwargs):
    raise NotImplementedError("tensordict stand-in: import only")
