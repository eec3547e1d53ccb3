"""kernelkit.models."""
