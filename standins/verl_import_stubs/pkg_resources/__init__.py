"""Import-only stand-in for setuptools' pkg_resources, which verl 0.4.x imports and this machine's setuptools (84) no
longer ships (see ../README.md). get_distribution answers from importlib.metadata, as pkg_resources did."""

from importlib import metadata


class DistributionNotFound(Exception):
    pass


def get_distribution(name):
    try:
        return metadata.distribution(name)
    except metadata.PackageNotFoundError as e:
        raise DistributionNotFound(name) from e
