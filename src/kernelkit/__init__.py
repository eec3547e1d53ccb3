"""kernelkit: kernel methods and kernel-based representation learning for any data."""

__version__ = "0.1.0"
