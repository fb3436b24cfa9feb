from . import TensorDict as TensorDictBase  # noqa: F401
