from . import NonTensorData, NonTensorStack  # noqa: F401
